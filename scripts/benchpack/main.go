// Command benchpack builds the history scripts/bench-pack.sh measures: a
// repository of -memories memory files in one folder, then -commits
// commits that each change one of them, through gitrepo.Commit as the
// tracker makes them. With -pack it packs in the background the way the
// tracker does (gitrepo.Pack once git's loose-object estimate passes
// -threshold, one pack at a time, never under the commit lock).
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"time"

	"github.com/mindmount/mindmount/fs/gitrepo"
	"github.com/mindmount/mindmount/fs/tracker"
)

func main() {
	dir := flag.String("dir", "", "repository to create (must not exist)")
	memories := flag.Int("memories", 10000, "memory files in the repository")
	commits := flag.Int("commits", 10000, "single-file commits to make")
	pack := flag.Bool("pack", false, "pack in the background as the tracker does")
	threshold := flag.Int("threshold", 512, "loose objects that start a pack")
	flag.Parse()
	if *dir == "" {
		log.Fatal("-dir is required")
	}
	r, err := gitrepo.Init(*dir)
	if err != nil {
		log.Fatal(err)
	}
	who := gitrepo.Writer("bench")
	ctx := context.Background()
	w := tracker.Alone{Repo: r} // no daemon: the commits of the tracker's sequence alone
	mem := func(i, v int) []byte {
		return []byte(fmt.Sprintf("---\ndescription: Memory %d\n---\n# Memory %d\n\n## Fact\nYou like thing %d, version %d.\n", i, i, i, v))
	}
	write := func(rel string, data []byte) {
		abs := filepath.Join(*dir, rel)
		os.MkdirAll(filepath.Dir(abs), 0o755)
		if err := os.WriteFile(abs, data, 0o644); err != nil {
			log.Fatal(err)
		}
	}
	seed := make([]gitrepo.Change, *memories)
	for i := range seed {
		rel := fmt.Sprintf("user_memory/memory-%05d.md", i)
		write(rel, mem(i, 0))
		seed[i] = gitrepo.Change{Path: rel, Data: mem(i, 0)}
	}
	if _, err := w.Apply(ctx, tracker.Change{Changes: seed, Message: "seed", Author: who}); err != nil {
		log.Fatal(err)
	}

	kick := make(chan struct{}, 1)
	finished := make(chan struct{}) // closed after the last commit
	done := make(chan struct{})
	packs := 0
	go func() {
		defer close(done)
		if !*pack {
			return
		}
		for {
			select {
			case <-kick:
			case <-finished:
				// The daemon would go on running: let the packing it
				// owes the last commits finish before measuring.
				if r.Loose() < *threshold {
					return
				}
			}
			if r.Loose() >= *threshold {
				if err := r.Pack(ctx); err != nil {
					log.Print(err)
				}
				packs++
			}
		}
	}()
	start := time.Now()
	for c := 1; c <= *commits; c++ {
		i := (c * 7919) % *memories // spread over the folder
		rel := fmt.Sprintf("user_memory/memory-%05d.md", i)
		write(rel, mem(i, c))
		if _, err := w.Apply(ctx, tracker.Change{Changes: []gitrepo.Change{{Path: rel, Data: mem(i, c)}}, Message: fmt.Sprintf("agent: update %s", rel), Author: who}); err != nil {
			log.Fatal(err)
		}
		if *pack {
			select {
			case kick <- struct{}{}:
			default:
			}
		}
	}
	elapsed := time.Since(start)
	close(finished)
	<-done
	fmt.Printf("commits=%d elapsed=%s per-commit=%s background-packs=%d\n", *commits, elapsed.Round(time.Millisecond), (elapsed / time.Duration(*commits)).Round(time.Microsecond), packs)
}
