package gitrepo

import (
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
)

// TestTreeOrder: git sorts a tree's names as if directories ended in '/'.
func TestTreeOrder(t *testing.T) {
	for _, tc := range []struct {
		a, b treeEntry
		less bool
	}{
		{treeEntry{name: "a", mode: modeFile}, treeEntry{name: "b", mode: modeFile}, true},
		{treeEntry{name: "a.md", mode: modeFile}, treeEntry{name: "a", mode: modeTree}, true}, // "a." < "a/"
		{treeEntry{name: "a", mode: modeTree}, treeEntry{name: "a0", mode: modeFile}, true},   // "a/" < "a0"
		{treeEntry{name: "a", mode: modeFile}, treeEntry{name: "a.md", mode: modeFile}, true},
		{treeEntry{name: "a-b", mode: modeFile}, treeEntry{name: "a", mode: modeTree}, true}, // '-' < '/'
	} {
		if got := treeLess(tc.a, tc.b); got != tc.less {
			t.Errorf("treeLess(%q, %q) = %v", tc.a.name, tc.b.name, got)
		}
	}
}

func TestParseTreeRoundTrip(t *testing.T) {
	in := []treeEntry{
		{name: "a.md", mode: modeFile, hash: plumbing.NewHash("0123456789abcdef0123456789abcdef01234567")},
		{name: "dir", mode: modeTree, hash: plumbing.NewHash("89abcdef0123456789abcdef0123456789abcdef")},
		{name: "run", mode: modeExec},
	}
	out, err := parseTree(encodeTree(in))
	if err != nil || len(out) != len(in) {
		t.Fatalf("parseTree = %v, %v", out, err)
	}
	for i := range in {
		if in[i] != out[i] {
			t.Errorf("entry %d: %+v != %+v", i, out[i], in[i])
		}
	}
	for _, bad := range []string{"100644", "100644 name", "xyz name\x00" + string(make([]byte, 20)), "100644 n\x00short"} {
		if _, err := parseTree([]byte(bad)); err == nil {
			t.Errorf("parseTree(%q) accepted", bad)
		}
	}
}

func TestTreeCacheGenerations(t *testing.T) {
	c := newTreeCache()
	big := make([]treeEntry, treeCacheMax/2+1)
	id := func(n byte) plumbing.Hash { var h plumbing.Hash; h[0] = n; return h }
	c.put(id(1), big)
	c.put(id(2), big) // overflows: 1 moves to the old generation
	if _, ok := c.get(id(1)); !ok {
		t.Fatal("tree 1 lost after one overflow")
	}
	// The get promoted 1 (another overflow: 2 is now old); two more
	// overflows without touching 2 drop it.
	c.put(id(3), big)
	c.put(id(4), big)
	if _, ok := c.get(id(2)); ok {
		t.Fatal("tree 2 still cached after two generations")
	}
}
