package recall

import (
	"context"
	"fmt"
	"sync"
	"testing"
)

// TestConcurrentUse runs writers, searchers and background embedding at
// once; run with -race. The index must end consistent.
func TestConcurrentUse(t *testing.T) {
	ix := New()
	if err := ix.SetVectors(NewVectors(&fakeEmbedder{}, "fake", t.TempDir()), true); err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	var wg sync.WaitGroup
	for w := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 200 {
				p := fmt.Sprintf("m%d.md", (w*200+i)%150)
				if i%5 == 4 {
					ix.Delete(p)
					continue
				}
				ix.Put(Doc{Path: p, Active: i%3 != 0, Title: "dog walk", Fact: fmt.Sprintf("walked the dog %d times with friend %d", i, w)})
			}
		}()
	}
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 200 {
				ix.SearchContext(context.Background(), "dog walks friend", Options{K: 5})
				ix.Search("walked", Options{All: true})
			}
		}()
	}
	wg.Wait()
	ix.checkInvariants(t)
}
