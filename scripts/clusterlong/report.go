package main

import (
	"context"
	"fmt"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mindmount/mindmount/serve/cluster"
)

// exercise runs the writers and the samplers through a warm-up, the
// pause trials (node d joins halfway) and a last stretch, then stops
// them.
func (r *rig) exercise(ctx context.Context) *stats {
	st := &stats{acked: map[string][]int{}}
	stop := make(chan struct{})
	var paused syncString
	var wg sync.WaitGroup
	for i := range r.o.writers {
		wg.Go(func() { r.writer(ctx, stop, i, st) })
	}
	wg.Go(func() { r.sample(ctx, stop, &paused, st) })
	pause := func(d time.Duration) {
		select {
		case <-ctx.Done():
		case <-time.After(d):
		}
	}
	pause(20 * time.Second)
	for i := 0; i < r.o.pauses && ctx.Err() == nil; i++ {
		if i == r.o.pauses/2 {
			r.join(ctx)
		}
		r.trial(ctx, i, &paused, st)
		if (i+1)%10 == 0 {
			log.Printf("%d trials, %d writes acknowledged, %d answers", i+1, st.ackHTTP+st.ackMCP, st.served.Load())
		}
	}
	if r.o.pauses == 0 {
		r.join(ctx)
	}
	pause(20 * time.Second)
	close(stop)
	wg.Wait()
	if s, err := cluster.ReadStatus(ctx, r.etcd); err == nil {
		for _, n := range s.Nodes {
			if n.Name == "d" {
				st.joinedD = len(n.Users)
			}
		}
	}
	return st
}

// join starts node d mid-run.
func (r *rig) join(ctx context.Context) {
	if err := r.startNode("d"); err != nil {
		log.Printf("node d did not join: %v", err)
		return
	}
	log.Printf("node d joined")
}

// check compares every user's acknowledged writes with its repository
// on the git host (a minute for pushes under way), counts refused
// non-fast-forward pushes and runs git fsck.
func (st *stats) check(r *rig) {
	deadline := time.Now().Add(time.Minute)
	for user, ns := range st.acked {
		bare := filepath.Join(r.o.work, "remotes", user+".git")
		for {
			lack := lacking(bare, ns)
			if len(lack) == 0 || time.Now().After(deadline) {
				st.lost += len(lack)
				if len(lack) > 0 {
					log.Printf("%s: acknowledged writes %v are not on the git host", user, lack)
				}
				break
			}
			time.Sleep(500 * time.Millisecond)
		}
	}
	for _, u := range r.users {
		bare := filepath.Join(r.o.work, "remotes", u+".git")
		updates, _ := os.ReadFile(filepath.Join(bare, "updates.log"))
		st.forced += strings.Count(string(updates), "REFUSED")
		if out, err := exec.Command("git", "--git-dir", bare, "fsck", "--no-progress").CombinedOutput(); err != nil {
			st.fsckBad++
			log.Printf("git fsck %s: %v %s", u, err, out)
		}
	}
}

// lacking is which of ns the bare repository's branch lacks (a file
// w-N.md anywhere in its tree).
func lacking(bare string, ns []int) []int {
	ref, _ := exec.Command("git", "--git-dir", bare, "for-each-ref", "--count=1", "--format=%(refname)", "refs/heads").Output()
	out, _ := exec.Command("git", "--git-dir", bare, "ls-tree", "-r", "--name-only", strings.TrimSpace(string(ref))).Output()
	have := map[string]bool{}
	for _, p := range strings.Split(string(out), "\n") {
		have[filepath.Base(p)] = true
	}
	var lack []int
	for _, n := range ns {
		if !have[fmt.Sprintf("w-%d.md", n)] {
			lack = append(lack, n)
		}
	}
	return lack
}

func pct(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[min(len(s)-1, int(float64(len(s))*p))]
}

func ms(d time.Duration) string { return fmt.Sprintf("%.3f ms", float64(d.Microseconds())/1000) }

// print writes the figures.
func (st *stats) print(o options, took time.Duration) {
	lag := make([]time.Duration, len(st.lag))
	for i, s := range st.lag {
		lag[i] = time.Duration(s * float64(time.Second))
	}
	fmt.Printf("cluster-long: %d users, nodes a b c + d joining, ttl %s, sync-replication %v, %d writers, %s\n", o.users, o.ttl, o.syncRep, o.writers, took.Round(time.Second))
	fmt.Printf("requests served (2xx)      %d\n", st.served.Load())
	fmt.Printf("writes acknowledged        %d (HTTP chat+bye %d, MCP create %d); given up after 90 s: %d\n", st.ackHTTP+st.ackMCP, st.ackHTTP, st.ackMCP, st.unacked)
	fmt.Printf("byes with nothing to consolidate (the chat's transcript stayed on the node that lost the user; tried again): %d\n", st.byeEmpty)
	fmt.Printf("writes lost                %d\n", st.lost)
	fmt.Printf("forced pushes              %d (non-fast-forward updates refused by the git host); git fsck failures %d\n", st.forced, st.fsckBad)
	fmt.Printf("direct to the owner        p50 %s  p95 %s  (%d samples)\n", ms(pct(st.direct, 0.5)), ms(pct(st.direct, 0.95)), len(st.direct))
	fmt.Printf("one forward hop            p50 %s  p95 %s  (+%s at p50)\n", ms(pct(st.hop, 0.5)), ms(pct(st.hop, 0.95)), ms(pct(st.hop, 0.5)-pct(st.direct, 0.5)))
	fmt.Printf("take-over after a pause    p50 %.2f s  p95 %.2f s  (%d trials, %d skipped; lease %s)\n", pct(st.takeover, 0.5).Seconds(), pct(st.takeover, 0.95).Seconds(), st.trials, st.skipped, o.ttl)
	fmt.Printf("replication lag (worst per node, sampled)  p95 %.3f s  max %.3f s  (%d samples)\n", pct(lag, 0.95).Seconds(), pct(lag, 1).Seconds(), len(lag))
	fmt.Printf("node d joined halfway and holds %d of %d users at the end (%.1f%%)\n", st.joinedD, o.users, 100*float64(st.joinedD)/float64(max(o.users, 1)))
}
