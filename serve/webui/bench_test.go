package webui

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/mindmount/mindmount/fs/gitrepo"
	"github.com/mindmount/mindmount/fs/tracker"
	"github.com/mindmount/mindmount/serve/host"
)

// bigRepo makes a repository of n user memories, each added by its own
// commit (n commits on top of the seed), with git fast-import.
func bigRepo(b *testing.B, n int) string {
	b.Helper()
	dir := newRepo(b)
	var in bytes.Buffer
	for i := 1; i <= n; i++ {
		body := memoryFile(fmt.Sprintf("Memory %d", i), fmt.Sprintf("Fact number %d about topic %d", i, i%97), fmt.Sprintf("The user said thing %d.", i))
		for u := 0; u < i%7; u++ {
			body += fmt.Sprintf("used, %02d.11.26\n", u+1)
		}
		msg := fmt.Sprintf("agent: add user_memory/m%05d.md\n\nA user_memory/m%05d.md\n", i, i)
		fmt.Fprintf(&in, "commit refs/heads/main\ncommitter agent <agent@mindmount.local> %d +0000\ndata %d\n%s", 1764000000+i, len(msg), msg)
		if i == 1 {
			in.WriteString("from refs/heads/main^0\n")
		}
		fmt.Fprintf(&in, "M 100644 inline user_memory/m%05d.md\ndata %d\n%s\n", i, len(body), body)
	}
	cmd := exec.Command("git", "fast-import", "--quiet", "--force")
	cmd.Dir = dir
	cmd.Stdin = &in
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("fast-import: %v\n%s", err, out)
	}
	gitT(b, dir, "reset", "-q", "--hard", "main")
	return dir
}

// msPerPage reports a sub-benchmark's time per page in milliseconds.
func msPerPage(b *testing.B) {
	b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "ms/page")
}

// BenchmarkPages renders each page at 10,000 memories and 10,000 commits,
// server time only (the handler, no network). The baselines are what the
// pages stand on: gitlog, git log of one page of commits (the timeline);
// memory-vs-bloom, the memory page against git log -p of the memory with
// the commit-graph's changed-path Bloom filters (what the page asked
// before the history index), both timed in each round, with their ratio.
// memory-unindexed is the page before the index is built. Each page is
// loaded once before it is timed (what it caches for the next load is
// made); memories-changed, graph-changed and log-deep-committed are the
// pages right after a change, their caches made again.
//
//	go test ./serve/webui -run '^$' -bench Pages -benchtime 20x
func BenchmarkPages(b *testing.B) {
	const n = 10000
	dir := bigRepo(b, n)
	rt := startRuntime(b, dir, host.RuntimeConfig{})
	srv, err := New(Config{Single: rt, Logger: testLogger()})
	if err != nil {
		b.Fatal(err)
	}
	sess, err := srv.sess.create(Grant{Write: true, Review: true})
	if err != nil {
		b.Fatal(err)
	}
	get := func(b *testing.B, path string) {
		req := httptest.NewRequest(http.MethodGet, path, nil)
		req.AddCookie(&http.Cookie{Name: cookieName, Value: sess.id})
		w := httptest.NewRecorder()
		srv.ServeHTTP(w, req)
		if w.Code != http.StatusOK {
			b.Fatalf("GET %s: %d\n%s", path, w.Code, w.Body.String())
		}
	}
	const mem = "user_memory/m05000.md"
	// Before the history index: the page asks git, which runs into its budget.
	b.Run("memory-unindexed", func(b *testing.B) {
		for b.Loop() {
			get(b, "/m/"+mem)
		}
		msPerPage(b)
	})
	t0 := time.Now()
	if err := rt.Repo.IndexHistory(context.Background()); err != nil {
		b.Fatal(err)
	}
	b.Logf("history index of %d commits built in %v", n, time.Since(t0).Round(time.Millisecond))
	for _, p := range []struct{ name, path string }{
		{"memories", "/"},
		{"memory", "/m/" + mem},
		{"log", "/log"},
		{"log-deep", "/log?skip=9000"},
		{"search", "/search?q=" + strings.ReplaceAll("thing topic 42", " ", "+")},
		{"status", "/status"},
		{"graph", "/graph"},
	} {
		b.Run(p.name, func(b *testing.B) {
			get(b, p.path) // what a page keeps for the next one (ui_cache.go) is made
			for b.Loop() {
				get(b, p.path)
			}
			msPerPage(b)
		})
	}
	gitlogPath := func(b *testing.B) {
		if _, err := git(context.Background(), dir, "log", logFormat, "-n", "50", "-p", "-m", "--first-parent", "HEAD", "--", mem); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("gitlog", func(b *testing.B) {
		for b.Loop() {
			if _, err := git(context.Background(), dir, "log", logFormat, "-n", "100", "HEAD", "--"); err != nil {
				b.Fatal(err)
			}
		}
	})
	if _, err := git(context.Background(), dir, "commit-graph", "write", "--reachable", "--changed-paths"); err != nil {
		b.Fatal(err)
	}
	b.Run("memory-vs-bloom", func(b *testing.B) {
		var page, bloom time.Duration
		for b.Loop() {
			t0 := time.Now()
			get(b, "/m/"+mem)
			t1 := time.Now()
			gitlogPath(b)
			page, bloom = page+t1.Sub(t0), bloom+time.Since(t1)
		}
		b.ReportMetric(page.Seconds()*1000/float64(b.N), "page-ms")
		b.ReportMetric(bloom.Seconds()*1000/float64(b.N), "gitlog-bloom-ms")
		b.ReportMetric(float64(bloom)/float64(page), "x-faster")
	})

	// The pages right after a change, as a live page reloads them: the
	// list pages after the graph changed (their view of it built again),
	// the deep timeline after a commit (its commit list extended).
	for _, p := range []struct{ name, path string }{{"memories-changed", "/"}, {"graph-changed", "/graph"}} {
		b.Run(p.name, func(b *testing.B) {
			i := 0
			for b.Loop() {
				i++
				rt.Graph.Put(mem, []byte(memoryFile("Changed", "changed", fmt.Sprintf("Fact changed %d times", i))))
				get(b, p.path)
			}
			msPerPage(b)
		})
	}
	b.Run("log-deep-committed", func(b *testing.B) {
		i := 0
		for b.Loop() {
			b.StopTimer()
			i++
			if _, err := rt.Tracker.Apply(context.Background(), tracker.Change{Message: fmt.Sprintf("bench commit %d", i), Author: gitrepo.Writer("bench"),
				Changes: []gitrepo.Change{{Path: "notes/bench.txt", Data: fmt.Appendf(nil, "%d\n", i)}}, Worktree: true}); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
			get(b, "/log?skip=9000")
		}
		msPerPage(b)
	})
}
