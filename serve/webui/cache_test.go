package webui

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// commitAt commits a change to file in dir as author, committed at unix
// time sec (git log orders by the committer's date).
func commitAt(t *testing.T, dir, author, file string, sec int) string {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, file), fmt.Appendf(nil, "%s %d\n", author, sec), 0o644); err != nil {
		t.Fatal(err)
	}
	date := fmt.Sprintf("@%d +0000", sec)
	for _, args := range [][]string{{"add", "-A"}, {"commit", "-qm", fmt.Sprintf("%s at %d", author, sec)}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME="+author, "GIT_AUTHOR_EMAIL="+author+"@test",
			"GIT_COMMITTER_NAME="+author, "GIT_COMMITTER_EMAIL="+author+"@test", "GIT_AUTHOR_DATE="+date, "GIT_COMMITTER_DATE="+date)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	return gitT(t, dir, "rev-parse", "HEAD")
}

// gitHashes is what git itself lists: git log with args, hashes only.
func gitHashes(t *testing.T, dir string, args ...string) []string {
	t.Helper()
	return strings.Fields(gitT(t, dir, append([]string{"log", "--format=%H"}, args...)...))
}

// checkPages compares every page of the commit list of HEAD, for each
// author filter, with git log --skip/-n/--author of the same HEAD.
func checkPages(t *testing.T, c *logCache, dir string) {
	t.Helper()
	head := gitT(t, dir, "rev-parse", "HEAD")
	l, err := c.list(context.Background(), dir, head)
	if err != nil {
		t.Fatal(err)
	}
	for _, author := range []string{"", "ann", "bob@", "nobody"} {
		var want []string
		if author == "" {
			want = gitHashes(t, dir, "HEAD")
		} else {
			want = gitHashes(t, dir, "--fixed-strings", "--author="+author, "HEAD")
		}
		const n = 3
		for skip := 0; skip <= len(want)+1; skip++ {
			got, more := l.page(author, skip, n)
			w := want[min(skip, len(want)):min(skip+n, len(want))]
			if !slices.Equal(got, w) || more != (skip+n < len(want)) {
				t.Fatalf("author %q skip %d: got %d commits (more %v), git log shows %d (of %d)\ngot  %.8s\nwant %.8s",
					author, skip, len(got), more, len(w), len(want), got, w)
			}
		}
	}
}

// TestCommitList: the timeline's pages cut from the cached commit list are
// git log's pages, by author too, after HEAD moves forward (the list is
// extended) and after a merge of a branch whose commits are older than
// some on main (git interleaves them by date: the list is read again).
func TestCommitList(t *testing.T) {
	dir := t.TempDir()
	gitT(t, dir, "init", "-q", "-b", "main")
	base := commitAt(t, dir, "ann", "a", 1000)
	for i, who := range []string{"bob", "ann", "ann", "bob", "cy"} {
		commitAt(t, dir, who, "a", 1010+10*i)
	}
	var c logCache
	checkPages(t, &c, dir)

	// Forward by single-parent commits: extended.
	for i, who := range []string{"bob", "ann", "cy", "ann"} {
		commitAt(t, dir, who, "a", 2000+10*i)
	}
	checkPages(t, &c, dir)

	// A side branch from the start, its commits dated between main's:
	// git log shows them interleaved, not on top.
	gitT(t, dir, "checkout", "-q", "-b", "side", base)
	for i, who := range []string{"bob", "ann", "bob"} {
		commitAt(t, dir, who, "b", 1015+10*i)
	}
	gitT(t, dir, "checkout", "-q", "main")
	cmd := exec.Command("git", "merge", "-q", "--no-edit", "side")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=ann", "GIT_AUTHOR_EMAIL=ann@test", "GIT_COMMITTER_NAME=ann",
		"GIT_COMMITTER_EMAIL=ann@test", "GIT_AUTHOR_DATE=@3000 +0000", "GIT_COMMITTER_DATE=@3000 +0000")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("merge: %v\n%s", err, out)
	}
	checkPages(t, &c, dir)

	// After the merge, forward again; then HEAD moved back.
	commitAt(t, dir, "cy", "a", 4000)
	checkPages(t, &c, dir)
	gitT(t, dir, "reset", "-q", "--hard", "HEAD~3")
	checkPages(t, &c, dir)
}

// TestTimelineDeepPages: the timeline's later pages and its author filter
// through the commit list, on a history longer than a page.
func TestTimelineDeepPages(t *testing.T) {
	s := newSiteSeeded(t, func(dir string) {
		for i := range logPage + 20 {
			commitAt(t, dir, []string{"ann", "bob"}[i%2], "notes.txt", 1764000000+i)
		}
	})
	_, body := s.get("/log?skip=100")
	// 121 commits: the page from the 101st holds the 21 oldest, the
	// first of them bob's commit at +19, the last the seed.
	mustContain(t, body, ">bob at 1764000019<", `<div class="subject">seed</div>`, "newer")
	mustNotContain(t, body, ">ann at 1764000020<", ">older<")
	_, body = s.get("/log?author=bob&skip=50")
	mustContain(t, body, ">bob at 1764000019<", "newer")
	mustNotContain(t, body, ">bob at 1764000021<", ">ann at", ">seed<", ">older<")
	code, body := s.get("/log?skip=100000")
	if code != http.StatusOK {
		t.Fatalf("skip past the end: %d", code)
	}
	mustContain(t, body, "no commits")
}

// TestViewCacheFollowsGraph: the list pages' view is rebuilt when the graph
// changes (a new version) and kept while it does not.
func TestViewCacheFollowsGraph(t *testing.T) {
	s := newSite(t)
	g := s.rt.Graph
	var c viewCache
	v1 := c.get(g).lists(g)
	if c.get(g) != v1 {
		t.Fatal("an unchanged graph's view was rebuilt")
	}
	g.Put("user_memory/new.md", []byte(memoryFile("New", "A new one", "Something new.", "01.11.26", "02.11.26", "03.11.26", "04.11.26")))
	v2 := c.get(g).lists(g)
	if v2 == v1 {
		t.Fatal("the view of a changed graph was kept")
	}
	if !slices.ContainsFunc(v2.kinds[0].ranked, func(r memRow) bool { return r.Path == "user_memory/new.md" && r.Rank == 1 }) {
		t.Fatalf("the new, most used memory is not first: %+v", v2.kinds[0].ranked)
	}
	code, body := s.get("/")
	if code != http.StatusOK {
		t.Fatalf("GET /: %d", code)
	}
	mustContain(t, body, ">user_memory/new.md<")
	_, body = s.get("/graph")
	mustContain(t, body, "user_memory/new.md — A new one")
	g.Remove("user_memory/new.md")
	_, body = s.get("/")
	mustNotContain(t, body, ">user_memory/new.md<")
	_, body = s.get("/graph")
	mustNotContain(t, body, "user_memory/new.md")
}
