package hooks

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestInstallReplacesEarlierBuild: Install over a clone wired by the build
// before the rename replaces its hook, merge drivers and attributes, and
// keeps a driver of the same name that the user pointed elsewhere.
func TestInstallReplacesEarlierBuild(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git CLI not installed")
	}
	dir := t.TempDir()
	mustGit(t, dir, "init", "-q", "-b", "main")
	gitDir := filepath.Join(dir, ".git")
	write(t, gitDir, "hooks/pre-commit", "#!/bin/sh\n"+legacyHookMarker+" (installed by \"engram hooks install\").\nexec engram hook pre-commit \"$@\"\n")
	write(t, gitDir, "info/attributes", "*.bin binary\n"+legacyAttrMarker+"\n.engram/cursor.json merge=engram-cursor\n*.md merge=engram-memory\n"+legacyAttrMarker+" end\n")
	mustGit(t, dir, "config", "merge.engram-cursor.driver", "/usr/local/bin/engram merge-cursor %O %A %B")
	mustGit(t, dir, "config", "merge.engram-memory.driver", "my-merger %O %A %B") // the user's, not the old build's

	if err := Install(dir); err != nil {
		t.Fatal(err)
	}
	hook, _ := os.ReadFile(filepath.Join(gitDir, "hooks/pre-commit"))
	if string(hook) != preCommitScript {
		t.Errorf("pre-commit hook not replaced:\n%s", hook)
	}
	attrs, _ := os.ReadFile(filepath.Join(gitDir, "info/attributes"))
	if want := "*.bin binary\n" + attrMarker + "\n.mindmount/cursor.json merge=mindmount-cursor\n*.md merge=mindmount-memory\n" + attrMarker + " end\n"; string(attrs) != want {
		t.Errorf("info/attributes:\n%s\nwant:\n%s", attrs, want)
	}
	cfg := mustGit(t, dir, "config", "--get-regexp", `^merge\.`)
	if strings.Contains(cfg, "engram-cursor") {
		t.Errorf("the old cursor driver is still configured:\n%s", cfg)
	}
	if !strings.Contains(cfg, "merge.engram-memory.driver my-merger") {
		t.Errorf("the user's driver was removed:\n%s", cfg)
	}
	if !strings.Contains(cfg, "merge.mindmount-memory.driver mindmount merge-memory") {
		t.Errorf("no mindmount driver:\n%s", cfg)
	}
}

func TestIsLegacyDriver(t *testing.T) {
	for cmd, want := range map[string]bool{
		"engram merge-memory %O %A %B %P":            true,
		"/home/ada/go/bin/engram merge-cursor %O %A": true,
		"my-merger %O %A %B":                         false,
		"/opt/engrammar merge %O":                    false,
		"mindmount merge-memory %O %A %B %P":         false,
		"":                                           false,
	} {
		if got := isLegacyDriver(cmd); got != want {
			t.Errorf("isLegacyDriver(%q) = %v", cmd, got)
		}
	}
}
