package gitrepo

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
)

// checkHistory asserts that History answers, for every path the history
// ever touched, what git log answers for the web page's question: the
// commits of HEAD's first-parent chain that changed the path.
func checkHistory(t *testing.T, r *Repo, dir, when string) {
	t.Helper()
	var paths []string
	for _, p := range strings.Split(gitCmd(t, dir, "log", "--format=", "--name-only", "-m", "HEAD"), "\n") {
		if p != "" && !slices.Contains(paths, p) {
			paths = append(paths, p)
		}
	}
	if len(paths) == 0 {
		t.Fatalf("%s: no paths in the history", when)
	}
	for _, p := range paths {
		want := strings.Fields(gitCmd(t, dir, "log", "--format=%H", "-m", "--first-parent", "HEAD", "--", p))
		got, err := r.History(context.Background(), p, 1000)
		if err != nil {
			t.Fatalf("%s: History(%s): %v", when, p, err)
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s: History(%s) =\n%v\ngit log says\n%v", when, p, got, want)
		}
	}
}

// TestHistoryMatchesGitLog: the index agrees with git log after commits,
// after a pack and after the commits made since it (the tail), after a
// git revert, a merge, a reset to an older commit and a reopen.
func TestHistoryMatchesGitLog(t *testing.T) {
	r, dir := tempRepo(t)
	step := func(i int) {
		apply(t, r, fmt.Sprintf("c%d", i),
			put(fmt.Sprintf("user_memory/m%d.md", i%5), fmt.Sprintf("v%d\n", i)),
			put(fmt.Sprintf("deep/a/b/n%d.md", i%3), fmt.Sprintf("w%d\n", i)))
	}
	for i := 0; i < 12; i++ {
		step(i)
	}
	apply(t, r, "delete", del("user_memory/m1.md"))
	apply(t, r, "exec", Change{Path: "deep/a/b/n0.md", Data: []byte("w9\n"), Exec: true})
	checkHistory(t, r, dir, "before any pack")

	if err := r.Pack(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(r.historyFile()); err != nil {
		t.Fatalf("Pack saved no history index: %v", err)
	}
	for i := 12; i < 16; i++ {
		step(i)
	}
	checkHistory(t, r, dir, "commits after the pack")

	gitCmd(t, dir, "revert", "--no-edit", "HEAD~1")
	checkHistory(t, r, dir, "after git revert")

	gitCmd(t, dir, "checkout", "-q", "-b", "side", "HEAD~3")
	writeFile(t, dir, "user_memory/side.md", "side\n")
	writeFile(t, dir, "user_memory/m2.md", "side's m2\n")
	gitCmd(t, dir, "add", "-A")
	gitCmd(t, dir, "commit", "-q", "-m", "side")
	gitCmd(t, dir, "checkout", "-q", "main")
	gitCmd(t, dir, "merge", "-q", "--no-edit", "-X", "theirs", "side")
	checkHistory(t, r, dir, "after a merge")

	if err := r.IndexHistory(context.Background()); err != nil {
		t.Fatal(err)
	}
	gitCmd(t, dir, "reset", "-q", "--hard", "HEAD~6")
	r2, err := Open(dir) // reads the saved index, which runs past HEAD now
	if err != nil {
		t.Fatal(err)
	}
	checkHistory(t, r2, dir, "after a reset to an older commit")
	for i := 16; i < 19; i++ {
		apply(t, r2, fmt.Sprintf("c%d", i), put(fmt.Sprintf("user_memory/m%d.md", i%5), fmt.Sprintf("v%d\n", i)))
	}
	checkHistory(t, r2, dir, "new commits after the reset")
}

// TestHistoryFileIsACache: a corrupt or foreign index file is ignored and
// rebuilt, never believed.
func TestHistoryFileIsACache(t *testing.T) {
	r, dir := tempRepo(t)
	for i := 0; i < 5; i++ {
		apply(t, r, fmt.Sprintf("c%d", i), put(fmt.Sprintf("user_memory/m%d.md", i%2), fmt.Sprintf("v%d\n", i)))
	}
	if err := r.IndexHistory(context.Background()); err != nil {
		t.Fatal(err)
	}
	good, err := os.ReadFile(r.historyFile())
	if err != nil {
		t.Fatal(err)
	}
	for name, bad := range map[string][]byte{
		"cut":     good[:len(good)-3],
		"foreign": []byte("something else\n"),
		"garbage": append([]byte(historyMagic), "zz\x00a\x00\x00"...),
	} {
		if err := os.WriteFile(r.historyFile(), bad, 0o644); err != nil {
			t.Fatal(err)
		}
		r2, err := Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		checkHistory(t, r2, dir, name)
	}
}

// TestHistoryTailBound: a history too far from the index is left to
// IndexHistory instead of being walked by a request.
func TestHistoryTailBound(t *testing.T) {
	r, dir := tempRepo(t)
	defer func(n int) { maxTail = n }(maxTail)
	maxTail = 3
	for i := 0; i < 5; i++ {
		apply(t, r, fmt.Sprintf("c%d", i), put("user_memory/m.md", fmt.Sprintf("v%d\n", i)))
	}
	if _, err := r.History(context.Background(), "user_memory/m.md", 10); !errors.Is(err, ErrNoHistory) {
		t.Fatalf("History 5 commits past an index of none, walking at most 3: %v, want ErrNoHistory", err)
	}
	if err := r.IndexHistory(context.Background()); err != nil {
		t.Fatal(err)
	}
	checkHistory(t, r, dir, "after IndexHistory")
}

// FuzzParseHistory: a saved index file is read defensively.
func FuzzParseHistory(f *testing.F) {
	f.Add([]byte(historyMagic + strings.Repeat("a", 40) + "\x00p\x00\x00"))
	f.Add([]byte(historyMagic + strings.Repeat("a", 40) + "\x00p\x00p\x00\x00"))
	f.Add([]byte(historyMagic))
	f.Fuzz(func(t *testing.T, b []byte) {
		h, ok := parseHistory(b)
		if !ok {
			return
		}
		for path, ps := range h.paths {
			if path == "" || len(ps) == 0 || !slices.IsSorted(ps) {
				t.Fatalf("path %q: %v", path, ps)
			}
			for i, p := range ps {
				if int(p) >= len(h.commits) || i > 0 && ps[i-1] == p {
					t.Fatalf("path %q: %v of %d commits", path, ps, len(h.commits))
				}
			}
		}
	})
}

// TestHistoryWithoutGit: without the git CLI the index is built in
// process, to the same answer.
func TestHistoryWithoutGit(t *testing.T) {
	r, dir := tempRepo(t)
	for i := 0; i < 2*shortTail+3; i++ {
		apply(t, r, fmt.Sprintf("c%d", i), put(fmt.Sprintf("user_memory/m%d.md", i%4), fmt.Sprintf("v%d\n", i)))
	}
	path := os.Getenv("PATH")
	t.Setenv("PATH", t.TempDir())
	if err := r.IndexHistory(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", path)
	checkHistory(t, r, dir, "indexed without git")
}
