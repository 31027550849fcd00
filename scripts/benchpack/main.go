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
	b := bench{dir: *dir, w: tracker.Alone{Repo: r}, who: gitrepo.Writer("bench")}
	b.seed(*memories)
	packer := packer{r: r, threshold: *threshold, kick: make(chan struct{}, 1), finished: make(chan struct{}), done: make(chan struct{})}
	go packer.run(*pack)
	start := time.Now()
	for c := 1; c <= *commits; c++ {
		b.update((c*7919)%*memories, c) // spread over the folder
		if *pack {
			select {
			case packer.kick <- struct{}{}:
			default:
			}
		}
	}
	elapsed := time.Since(start)
	close(packer.finished)
	<-packer.done
	fmt.Printf("commits=%d elapsed=%s per-commit=%s background-packs=%d\n", *commits, elapsed.Round(time.Millisecond), (elapsed / time.Duration(*commits)).Round(time.Microsecond), packer.packs)
}

// bench writes memories and commits them through the tracker's sequence
// alone (no daemon).
type bench struct {
	dir string
	w   tracker.Alone
	who gitrepo.Author
}

// mem is memory i at version v.
func mem(i, v int) []byte {
	return []byte(fmt.Sprintf("---\ndescription: Memory %d\n---\n# Memory %d\n\n## Fact\nYou like thing %d, version %d.\n", i, i, i, v))
}

func memPath(i int) string { return fmt.Sprintf("user_memory/memory-%05d.md", i) }

func (b bench) write(rel string, data []byte) {
	abs := filepath.Join(b.dir, rel)
	os.MkdirAll(filepath.Dir(abs), 0o755)
	if err := os.WriteFile(abs, data, 0o644); err != nil {
		log.Fatal(err)
	}
}

// seed writes n memories and commits them at once.
func (b bench) seed(n int) {
	seed := make([]gitrepo.Change, n)
	for i := range seed {
		b.write(memPath(i), mem(i, 0))
		seed[i] = gitrepo.Change{Path: memPath(i), Data: mem(i, 0)}
	}
	if _, err := b.w.Apply(context.Background(), tracker.Change{Changes: seed, Message: "seed", Author: b.who}); err != nil {
		log.Fatal(err)
	}
}

// update rewrites memory i at version v in one commit.
func (b bench) update(i, v int) {
	rel := memPath(i)
	b.write(rel, mem(i, v))
	ch := tracker.Change{Changes: []gitrepo.Change{{Path: rel, Data: mem(i, v)}}, Message: fmt.Sprintf("agent: update %s", rel), Author: b.who}
	if _, err := b.w.Apply(context.Background(), ch); err != nil {
		log.Fatal(err)
	}
}

// packer packs in the background as the tracker does: once the loose
// objects pass the threshold, one pack at a time.
type packer struct {
	r         *gitrepo.Repo
	threshold int
	kick      chan struct{}
	finished  chan struct{} // closed after the last commit
	done      chan struct{}
	packs     int
}

func (p *packer) run(enabled bool) {
	defer close(p.done)
	if !enabled {
		return
	}
	for {
		select {
		case <-p.kick:
		case <-p.finished:
			// The daemon would go on running: let the packing it owes
			// the last commits finish before measuring.
			if p.r.Loose() < p.threshold {
				return
			}
		}
		if p.r.Loose() >= p.threshold {
			if err := p.r.Pack(context.Background()); err != nil {
				log.Print(err)
			}
			p.packs++
		}
	}
}
