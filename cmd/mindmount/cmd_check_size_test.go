package main

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestCheckHugeMemory: check reports a memory far over the size rule (a
// sparse 62 MB file) with the rule's problem, judged from its size: the
// run allocates a small fraction of the file.
func TestCheckHugeMemory(t *testing.T) {
	dir := mgRepo(t, mgFiles)
	if err := os.Truncate(filepath.Join(dir, "user_memory/tea.md"), 62<<20); err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	out, errs, code := mgRun("check", dir)
	runtime.ReadMemStats(&after)
	if n := after.TotalAlloc - before.TotalAlloc; n > (62<<20)/16 {
		t.Errorf("check allocated %d bytes for a 62 MB memory", n)
	}
	if code != 1 || !strings.Contains(out, "user_memory/tea.md: file is 65011712 bytes; memory files may be at most 65536 bytes") {
		t.Errorf("exit %d\nstdout %q\nstderr %q", code, out, errs)
	}
}
