package gitrepo

import (
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
