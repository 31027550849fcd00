// Package secrettest checks that planted secrets never reached a
// repository: not its work tree, not its git directory, not any git object
// once decompressed. Tests of every writer (consolidation, the mount, watch
// mode, HTTP, harness hooks) call ScanRepo after their scenario.
package secrettest

import (
	"bytes"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// ScanRepo fails t for every needle found under dir: in any file's raw
// bytes (the work tree, .git/ with its index, refs, logs and config) and
// in every git object decompressed (git cat-file --batch-all-objects, so
// loose and packed objects, reachable or not). skip lists top-level
// entries of dir not to read raw (a local inbox such as "transcripts",
// which is allowed to hold the text); .git is always scanned.
func ScanRepo(t testing.TB, dir string, needles []string, skip ...string) {
	t.Helper()
	var nonEmpty []string
	for _, n := range needles {
		if n != "" {
			nonEmpty = append(nonEmpty, n)
		}
	}
	skipped := map[string]bool{}
	for _, s := range skip {
		skipped[filepath.Join(dir, s)] = true
	}
	found := map[string][]string{} // needle -> where
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if skipped[p] {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		for _, n := range nonEmpty {
			if bytes.Contains(data, []byte(n)) {
				found[n] = append(found[n], rel)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("scanning %s: %v", dir, err)
	}
	if _, err := os.Stat(filepath.Join(dir, ".git")); err == nil {
		cmd := exec.Command("git", "-C", dir, "cat-file", "--batch-all-objects", "--batch")
		var out bytes.Buffer
		cmd.Stdout = &out
		if err := cmd.Run(); err != nil {
			t.Fatalf("git cat-file --batch-all-objects: %v", err)
		}
		if out.Len() == 0 {
			t.Fatalf("git cat-file printed no objects: the scan would prove nothing")
		}
		for _, n := range nonEmpty {
			if bytes.Contains(out.Bytes(), []byte(n)) {
				found[n] = append(found[n], "a git object")
			}
		}
	}
	for _, n := range nonEmpty {
		if where := found[n]; len(where) > 0 {
			t.Errorf("planted secret %q found in %s", n, strings.Join(where, ", "))
		}
	}
}
