package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestWatchInboxRenamedIsNeverCommitted: watch mode cannot refuse
// "mv transcripts transcripts.real" as the mount does; the daemon knows
// the inbox by its inode, moves it back, and commits none of its
// transcripts, while a note written beside it is committed as usual.
func TestWatchInboxRenamedIsNeverCommitted(t *testing.T) {
	requireGitCLI(t)
	dir := filepath.Join(t.TempDir(), "memory")
	runCmd(t, "init", dir)
	cmd, logs := startWatch(t, dir, "--debounce", "50ms", "--rescan", "0", "--consolidate=false")
	const private = `{"role":"user","content":"my private talk"}` + "\n"
	writeWatchFile(t, dir, "transcripts/s1.jsonl", private)
	if err := os.Rename(filepath.Join(dir, "transcripts"), filepath.Join(dir, "transcripts.real")); err != nil {
		t.Fatal(err)
	}
	writeWatchFile(t, dir, "notes/after.md", "# After\n\nwritten after the rename\n")
	waitFor(t, func() bool {
		return strings.Contains(gitOut(t, dir, "ls-files"), "notes/after.md")
	}, "notes/after.md committed")
	waitFor(t, func() bool {
		b, err := os.ReadFile(filepath.Join(dir, "transcripts", "s1.jsonl"))
		return err == nil && string(b) == private
	}, "the inbox moved back with its transcript")
	stopMindmount(t, cmd, logs)
	if files := gitOut(t, dir, "ls-files"); strings.Contains(files, "transcripts.real") || strings.Contains(files, "s1.jsonl") {
		t.Fatalf("the renamed inbox was committed:\n%s\nlogs:\n%s", files, logs.String())
	}
	if all := gitOut(t, dir, "log", "--all", "--name-only", "--format="); strings.Contains(all, "transcripts.real") {
		t.Fatalf("a commit holds the renamed inbox:\n%s", all)
	}
	if !strings.Contains(logs.String(), "inbox folder was renamed") {
		t.Errorf("the log does not say the inbox was moved back:\n%s", logs.String())
	}
}
