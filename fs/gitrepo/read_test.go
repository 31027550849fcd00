package gitrepo

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

func TestHeadExec(t *testing.T) {
	r, err := Init(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	who := Author{Name: "t", Email: "t@x"}
	if _, err := r.Commit([]Change{
		{Path: "run.sh", Data: []byte("#!/bin/sh\n"), Exec: true},
		{Path: "notes/a.md", Data: []byte("# A\n")},
	}, "files", who, time.Now()); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		rel      string
		exec, ok bool
	}{
		{"run.sh", true, true},
		{"notes/a.md", false, true},
		{"notes", false, false}, // a tree, not a file
		{"missing.md", false, false},
	}
	first, err := r.Head()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Commit([]Change{{Path: "run.sh", Data: []byte("#!/bin/sh\n")}}, "not executable now", who, time.Now()); err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		exec, ok, err := r.HeadExec(tt.rel)
		if tt.rel == "run.sh" {
			exec = !exec // the second commit dropped the bit
		}
		if err != nil || exec != tt.exec || ok != tt.ok {
			t.Errorf("HeadExec(%q) = %v, %v, %v; want %v, %v", tt.rel, exec, ok, err, tt.exec, tt.ok)
		}
		// ExecAt reads the commit it is given, not HEAD.
		exec, ok, err = r.ExecAt(first, tt.rel)
		if err != nil || exec != tt.exec || ok != tt.ok {
			t.Errorf("ExecAt(first, %q) = %v, %v, %v; want %v, %v", tt.rel, exec, ok, err, tt.exec, tt.ok)
		}
	}
}

func TestHeadFiles(t *testing.T) {
	r, err := Init(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if got, err := r.HeadFiles("state"); err != nil || len(got) != 0 {
		t.Fatalf("before the first commit: %v, %v; want none", got, err)
	}
	who := Author{Name: "t", Email: "t@x"}
	if _, err := r.Commit([]Change{
		{Path: "state/b.json", Data: []byte("{}\n")},
		{Path: "state/.keep", Data: nil},
		{Path: "state/deep/c", Data: []byte("c\n")},
		{Path: "stateful.md", Data: []byte("# not beneath state\n")},
		{Path: "other/a.md", Data: []byte("# A\n")},
	}, "files", who, time.Now()); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		dir  string
		want string
	}{
		{"state", "state/.keep state/b.json state/deep/c"},
		{"state/deep", "state/deep/c"},
		{"stateful.md", ""}, // a file, not a folder
		{"missing", ""},
	}
	for _, tt := range tests {
		got, err := r.HeadFiles(tt.dir)
		if err != nil || strings.Join(got, " ") != tt.want {
			t.Errorf("HeadFiles(%q) = %q, %v; want %q", tt.dir, got, err, tt.want)
		}
	}
}

// TestRecent: HEAD's first-parent chain, newest first, at most n.
func TestRecent(t *testing.T) {
	dir := t.TempDir()
	r, err := Init(dir)
	if err != nil {
		t.Fatal(err)
	}
	who := Author{Name: "ann", Email: "ann@example.com"}
	var want []string
	for i := range 4 {
		h, err := r.Commit([]Change{{Path: "user_memory/a.md", Data: []byte{byte('a' + i)}}}, fmt.Sprintf("commit %d", i), who, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		want = append([]string{h}, want...)
	}
	got, err := r.Recent(3)
	if err != nil || len(got) != 3 {
		t.Fatalf("Recent(3): %d %v", len(got), err)
	}
	for i, c := range got {
		if c.Hash != want[i] || c.Subject != fmt.Sprintf("commit %d", 3-i) || c.Author.Name != "ann" {
			t.Fatalf("commit %d: %+v, want %s", i, c, want[i])
		}
	}
	if all, _ := r.Recent(10); len(all) != 4 {
		t.Fatalf("Recent(10): %d commits, want 4", len(all))
	}
}
