package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mindmount/mindmount/consolidate/llmtest"
)

// doctor runs "mindmount doctor" in this process with HOME at home and
// the model settings env ("K=V"), and returns its exit code and stdout.
func doctor(t *testing.T, home string, env []string, args ...string) (int, string) {
	t.Helper()
	t.Setenv("HOME", home)
	for _, k := range []string{"MINDMOUNT_LLM", "MINDMOUNT_MODEL", "OLLAMA_HOST", "OPENAI_BASE_URL", "OPENAI_API_KEY", "ANTHROPIC_API_KEY"} {
		t.Setenv(k, "")
	}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	var out, errb bytes.Buffer
	code := run(append([]string{"doctor"}, args...), &out, &errb)
	return code, out.String() + errb.String()
}

// TestDoctor: with FUSE, git, a model that answers (the fake) and a fresh
// repository, doctor finds nothing to fix and exits 0; with no model it
// names the model, says the three ways to one and exits 1; hooks pointed
// at a mount that is not up are named with the command that brings it
// back.
func TestDoctor(t *testing.T) {
	requireFUSE(t)
	requireGitCLI(t)
	repo := filepath.Join(t.TempDir(), "memory")
	runCmd(t, "init", repo, "--user", "Ada")
	fake := llmtest.New(t)
	withFake := []string{"MINDMOUNT_LLM=ollama", "OLLAMA_HOST=" + fake.OllamaURL(), "MINDMOUNT_MODEL=fake"}

	code, out := doctor(t, t.TempDir(), withFake, repo)
	if code != 0 || strings.Contains(out, "FAIL") || !strings.Contains(out, "No problem found.") {
		t.Errorf("doctor with everything in place: exit %d\n%s", code, out)
	}
	for _, want := range []string{"ok    fuse", "ok    git", "ok    model    ollama fake at " + fake.OllamaURL() + " answers", "ok    hooks", "ok    daemon"} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in\n%s", want, out)
		}
	}

	code, out = doctor(t, t.TempDir(), noModel, repo)
	if code != 1 || !strings.Contains(out, "FAIL  model") || !strings.Contains(out, "no model yet?") || !strings.Contains(out, "fakellm") {
		t.Errorf("doctor without a model: exit %d\n%s", code, out)
	}

	home := t.TempDir()
	mnt := filepath.Join(t.TempDir(), "mnt")
	os.MkdirAll(mnt, 0o755)
	os.MkdirAll(filepath.Join(home, ".claude"), 0o755)
	settings := `{"hooks":{"SessionStart":[{"hooks":[{"type":"command","command":"` + mindmountBinary(t) + ` hook session-start --harness claude-code --repo ` + mnt + `"}]}]}}`
	os.WriteFile(filepath.Join(home, ".claude", "settings.json"), []byte(settings), 0o644)
	code, out = doctor(t, home, withFake)
	if code != 1 || !strings.Contains(out, "FAIL  harness") || !strings.Contains(out, mnt+", which is not mounted") || !strings.Contains(out, "mindmount mount REPO "+mnt) {
		t.Errorf("doctor with hooks at a mount that is down: exit %d\n%s", code, out)
	}
	os.WriteFile(filepath.Join(mnt, "CONTEXT.md"), []byte("# up\n"), 0o644)
	if code, out = doctor(t, home, withFake); code != 0 || !strings.Contains(out, "ok    harness") {
		t.Errorf("doctor with hooks at a mount that is up: exit %d\n%s", code, out)
	}
}
