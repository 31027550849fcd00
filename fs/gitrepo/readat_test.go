package gitrepo

import (
	"testing"
	"time"
)

// TestReadAtAndBranches: a file is read at any commit (an older one, HEAD
// by ""), a folder or a missing path is no file, and Branches lists the
// branches under a prefix with their commits — a commit on a branch beside
// HEAD (a dream's) is read there and leaves HEAD alone.
func TestReadAtAndBranches(t *testing.T) {
	r, err := Init(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	who := Author{Name: "t", Email: "t@x"}
	first, err := r.Commit([]Change{{Path: "notes/a.md", Data: []byte("one\n")}}, "one", who, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	second, err := r.Commit([]Change{{Path: "notes/a.md", Data: []byte("two\n")}}, "two", who, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	dream, err := r.Record(Commit{Branch: "mindmount/dream/1", Parents: []string{first}, Changes: []Change{{Path: "notes/b.md", Data: []byte("dreamt\n")}}, Message: "dream", Author: who, When: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		commit, rel, want string
		ok                bool
	}{
		{first, "notes/a.md", "one\n", true},
		{second, "notes/a.md", "two\n", true},
		{"", "notes/a.md", "two\n", true},
		{dream, "notes/a.md", "one\n", true},
		{dream, "notes/b.md", "dreamt\n", true},
		{"", "notes/b.md", "", false},
		{second, "notes", "", false},
		{second, "missing.md", "", false},
	} {
		got, ok, err := r.ReadAt(tc.commit, tc.rel)
		if err != nil || ok != tc.ok || string(got) != tc.want {
			t.Errorf("ReadAt(%.7s, %q) = %q, %v, %v", tc.commit, tc.rel, got, ok, err)
		}
	}
	if _, _, err := r.ReadAt("not-a-hash", "notes/a.md"); err == nil {
		t.Error("ReadAt of a name that is no commit hash")
	}
	if head, _ := r.Head(); head != second {
		t.Fatalf("a branch commit moved HEAD to %s", head)
	}
	bs, err := r.Branches("mindmount/dream/")
	if err != nil || len(bs) != 1 || bs["mindmount/dream/1"] != dream {
		t.Fatalf("Branches = %v, %v", bs, err)
	}
	if bs, _ := r.Branches("nothing/"); len(bs) != 0 {
		t.Fatalf("Branches(nothing/) = %v", bs)
	}
}
