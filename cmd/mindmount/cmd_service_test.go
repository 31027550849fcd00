package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mindmount/mindmount/hooks/harness"
)

// TestServiceInstall: with a systemd user manager (here a stand-in
// systemctl that records its arguments) the unit is written under
// XDG_CONFIG_HOME and enabled; without one it is printed with the
// commands, nothing written. The unit mounts REPO at MNT and holds the
// model's settings but never its key.
func TestServiceInstall(t *testing.T) {
	requireGitCLI(t)
	repo := filepath.Join(t.TempDir(), "memory")
	runCmd(t, "init", repo, "--user", "Ada")
	mnt := filepath.Join(t.TempDir(), "mnt")
	bin, config := t.TempDir(), t.TempDir()
	calls := filepath.Join(bin, "calls")
	os.WriteFile(filepath.Join(bin, "systemctl"), []byte("#!/bin/sh\necho \"$@\" >> "+calls+"\n"), 0o755)
	t.Setenv("PATH", bin+":/usr/bin:/bin")
	t.Setenv("XDG_CONFIG_HOME", config)
	t.Setenv("MINDMOUNT_LLM", "openai")
	t.Setenv("OPENAI_API_KEY", "sk-"+strings.Repeat("k", 40))
	out := runCmd(t, "service", "install", repo, mnt)
	name := harness.UnitName(mnt)
	unit, err := os.ReadFile(filepath.Join(config, "systemd", "user", name))
	if err != nil {
		t.Fatalf("no unit written: %v\n%s", err, out)
	}
	for _, want := range []string{"mount " + repo + " " + mnt + "\n", "Restart=on-failure", "Environment=\"MINDMOUNT_LLM=openai\"", "WantedBy=default.target"} {
		if !strings.Contains(string(unit), want) {
			t.Errorf("the unit has no %q:\n%s", want, unit)
		}
	}
	if strings.Contains(string(unit), "sk-") || strings.Contains(string(unit), "OPENAI_API_KEY") {
		t.Errorf("the unit holds the key:\n%s", unit)
	}
	got, _ := os.ReadFile(calls)
	if want := "--user show-environment\n--user daemon-reload\n--user enable --now " + name + "\n"; string(got) != want {
		t.Errorf("systemctl called with\n%s\nwant\n%s", got, want)
	}

	// No systemd: printed, not written.
	os.WriteFile(filepath.Join(bin, "systemctl"), []byte("#!/bin/sh\nexit 1\n"), 0o755)
	os.RemoveAll(filepath.Join(config, "systemd"))
	out = runCmd(t, "service", "install", repo, mnt)
	if !strings.Contains(out, "[Service]") || !strings.Contains(out, "systemctl --user enable --now "+name) {
		t.Errorf("printed:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(config, "systemd")); err == nil {
		t.Error("a unit was written without systemd")
	}
}

// TestHookMountDown: a session-start or prompt hook whose memory is a
// mountpoint with no mount tells the agent, in the context it returns,
// that the memory is not mounted and how to bring it back, and says the
// same on stderr; it still exits 0.
func TestHookMountDown(t *testing.T) {
	mnt := t.TempDir() // an empty folder: the mount is down
	for _, event := range []string{"session-start", "prompt"} {
		hookStdin = strings.NewReader(`{"session_id":"s1","prompt":"what do I like?"}`)
		var out, errb bytes.Buffer
		code := run([]string{"hook", event, "--harness", "claude-code", "--repo", mnt}, &out, &errb)
		hookStdin = os.Stdin
		var reply struct {
			HookSpecificOutput struct{ AdditionalContext string } `json:"hookSpecificOutput"`
		}
		if err := json.Unmarshal(out.Bytes(), &reply); err != nil {
			t.Fatalf("%s: stdout is not the hook's JSON: %v\n%s", event, err, out.String())
		}
		want := "memory is not mounted at " + mnt + ": run mindmount mount REPO " + mnt
		if code != 0 || !strings.Contains(reply.HookSpecificOutput.AdditionalContext, want) || !strings.Contains(errb.String(), want) {
			t.Errorf("%s: exit %d, context %q, stderr %q", event, code, reply.HookSpecificOutput.AdditionalContext, errb.String())
		}
	}
}
