package remote

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/mindmount/mindmount/fs/gitrepo"
)

// TestMergerDeleteVsChange: the sync merger hands MergeMemory a nil side
// for a file one side deleted. Deleted on one side and changed on the
// other, the change is kept, whichever side deleted; deleted on one side
// and untouched on the other, it goes.
func TestMergerDeleteVsChange(t *testing.T) {
	const p = "user_memory/likes-coffee.md"
	base := []byte(shared)
	changed := []byte(strings.Replace(shared, "used, 31.08.26\n", "used, 31.08.26\nused, 04.09.26\n", 1))
	cases := []struct {
		name       string
		ours, thrs []byte
		want       []gitrepo.Change // what the merge commit changes against ours
	}{
		{"deleted here, changed there", nil, changed, []gitrepo.Change{{Path: p, Data: changed}}},
		{"changed here, deleted there", changed, nil, nil},
		{"deleted here, unchanged there", nil, base, nil},
		{"unchanged here, deleted there", base, nil, []gitrepo.Change{{Path: p, Delete: true}}},
	}
	for _, tc := range cases {
		for _, newer := range []bool{true, false} {
			m := &merger{used: map[string]bool{}, theirsNewer: newer}
			if err := m.both(p, base, tc.ours, tc.thrs); err != nil {
				t.Fatal(err)
			}
			if got, want := describe(m.changes), describe(tc.want); got != want {
				t.Fatalf("%s (theirs newer %v): changes\n%s\nwant\n%s", tc.name, newer, got, want)
			}
		}
	}
}

// describe renders changes for a comparison and a readable failure.
func describe(cs []gitrepo.Change) string {
	var b strings.Builder
	for _, c := range cs {
		if c.Delete {
			b.WriteString("delete " + c.Path + "\n")
			continue
		}
		b.WriteString("write " + c.Path + ":\n" + string(c.Data))
	}
	if b.Len() == 0 {
		return "(none)"
	}
	return b.String()
}

// TestSyncDeleteVsChange: one machine deletes a memory while the other
// adds a use to it; after syncing both ways the memory is there, with the
// use, on both machines and the remote — whichever machine deleted it.
func TestSyncDeleteVsChange(t *testing.T) {
	const rel = "user_memory/likes-coffee.md"
	changed := strings.Replace(shared, "used, 31.08.26\n", "used, 31.08.26\nused, 04.09.26\n", 1)
	for _, deleterFirst := range []bool{true, false} {
		// The machine that syncs second merges: the changer when the
		// deletion is pushed first, the deleter otherwise.
		name := "deletion pushed first: changed here, deleted there"
		if !deleterFirst {
			name = "change pushed first: deleted here, changed there"
		}
		t.Run(name, func(t *testing.T) {
			srv := startGitServer(t)
			ctx := context.Background()
			a, b := newNode(t, seed), newNode(t, nil)
			for _, n := range []*node{a, b} { // a pushes the seed, b takes it
				if err := SetURL(n.dir, srv.URL()); err != nil {
					t.Fatal(err)
				}
				if _, err := n.s.Sync(ctx); err != nil {
					t.Fatal(err)
				}
			}
			// a deletes, b changes.
			if err := os.Remove(filepath.Join(a.dir, filepath.FromSlash(rel))); err != nil {
				t.Fatal(err)
			}
			a.tr.Touch(rel, "rm")
			a.flush()
			if _, ok := headHas(t, a, rel); ok {
				t.Fatal("the deletion was not committed")
			}
			b.write(rel, changed)
			b.flush()
			order := []*node{a, b, a}
			if !deleterFirst {
				order = []*node{b, a, b}
			}
			for _, n := range order {
				if _, err := n.s.Sync(ctx); err != nil {
					t.Fatalf("sync: %v\n%s", err, n.logs.String())
				}
			}
			for who, n := range map[string]*node{"a": a, "b": b} {
				if got := n.read(rel); got != changed {
					t.Errorf("%s: work tree has %q, want the changed memory", who, got)
				}
				if got, ok := headHas(t, n, rel); !ok || got != changed {
					t.Errorf("%s: HEAD has %q (%v), want the changed memory", who, got, ok)
				}
				if n.g.Get(rel) == nil {
					t.Errorf("%s: the graph lost the memory", who)
				}
			}
			if out, err := runOut(srv.bare, "git", "show", "main:"+rel); err != nil || !strings.Contains(out, "used, 04.09.26") {
				t.Errorf("remote: %v\n%s", err, out)
			}
		})
	}
}

// headHas returns rel's content in n's HEAD.
func headHas(t *testing.T, n *node, rel string) (string, bool) {
	t.Helper()
	out, err := runOut(n.dir, "git", "show", "HEAD:"+rel)
	if err != nil {
		return "", false
	}
	return out + "\n", true
}

// TestMergerTextByLines: a text file that is no memory, changed on both
// sides, merges by lines (hooks.MergeFile) when the changes are in
// different lines; in the same lines ours stays and theirs is kept beside
// it as NAME.remote.EXT, without conflict markers.
func TestMergerTextByLines(t *testing.T) {
	const p = "notes/plan.txt"
	base := []byte("one\ntwo\nthree\n")
	m := &merger{used: map[string]bool{}}
	if err := m.both(p, base, []byte("ONE\ntwo\nthree\n"), []byte("one\ntwo\nTHREE\n")); err != nil {
		t.Fatal(err)
	}
	if got, want := describe(m.changes), "write "+p+":\nONE\ntwo\nTHREE\n"; got != want {
		t.Fatalf("changes\n%s\nwant\n%s", got, want)
	}
	m = &merger{used: map[string]bool{}, o: &object.Tree{}, t: &object.Tree{}}
	if err := m.both(p, base, []byte("uno\ntwo\nthree\n"), []byte("eins\ntwo\nthree\n")); err != nil {
		t.Fatal(err)
	}
	if got, want := describe(m.changes), "write notes/plan.remote.txt:\neins\ntwo\nthree\n"; got != want {
		t.Fatalf("changes\n%s\nwant\n%s", got, want)
	}
}
