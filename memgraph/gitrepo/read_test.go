package gitrepo

import (
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
	for _, tt := range tests {
		exec, ok, err := r.HeadExec(tt.rel)
		if err != nil || exec != tt.exec || ok != tt.ok {
			t.Errorf("HeadExec(%q) = %v, %v, %v; want %v, %v", tt.rel, exec, ok, err, tt.exec, tt.ok)
		}
	}
}
