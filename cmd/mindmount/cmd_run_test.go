package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRunWrapsAnAgent runs a stand-in agent (a shell script) under
// "mindmount run": it finds the context in its environment and in the file
// named there, writes its conversation as JSONL to $MINDMOUNT_TRANSCRIPT, and
// exits 3. mindmount run exits 3 too, and the conversation is in the
// memory's transcripts/, once.
func TestRunWrapsAnAgent(t *testing.T) {
	repo := filepath.Join(t.TempDir(), "memory")
	runCmd(t, "init", repo)
	os.WriteFile(filepath.Join(repo, "user.md"), []byte("# User\n\nAda lives in Porto.\n"), 0o644)
	agent := `grep -q "Ada lives in Porto" "$MINDMOUNT_CONTEXT_FILE" || exit 10
case "$MINDMOUNT_CONTEXT" in *"Ada lives in Porto"*) ;; *) exit 11;; esac
[ "$MINDMOUNT_REPO" = "` + repo + `" ] || exit 12
printf '%s\n' '{"role":"user","content":"I moved to Lisbon last month."}' '{"role":"tool","content":"ls output"}' '{"role":"assistant","content":"Noted, Lisbon."}' >> "$MINDMOUNT_TRANSCRIPT"
echo agent-ran
exit 3`
	var out, errb bytes.Buffer
	code := run([]string{"run", "--repo", repo, "--", "sh", "-c", agent}, &out, &errb)
	if code != 3 || !strings.Contains(out.String(), "agent-ran") {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out.String(), errb.String())
	}
	files, _ := filepath.Glob(filepath.Join(repo, "transcripts", "run-*.jsonl"))
	if len(files) != 1 {
		t.Fatalf("transcripts: %v", files)
	}
	b, _ := os.ReadFile(files[0])
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], "Lisbon last month") || strings.Contains(string(b), "ls output") {
		t.Errorf("transcript:\n%s", b)
	}
	for _, l := range lines {
		var m map[string]string
		if err := json.Unmarshal([]byte(l), &m); err != nil || (m["role"] != "user" && m["role"] != "assistant") {
			t.Errorf("line %q: %v", l, err)
		}
	}
	// No memory: a clear error, the agent is not started.
	t.Setenv("MINDMOUNT_REPO", "")
	if code := run([]string{"run", "--", "sh", "-c", "echo started"}, &out, &errb); code == 0 {
		t.Error("ran without a memory")
	}
}

// TestHarnessPromptHook: the prompt hook adds the memories that match the
// prompt, in Claude Code's UserPromptSubmit shape, and nothing when none
// match.
func TestHarnessPromptHook(t *testing.T) {
	repo := filepath.Join(t.TempDir(), "memory")
	runCmd(t, "init", repo)
	os.WriteFile(filepath.Join(repo, "user_memory", "allergic-to-penicillin.md"),
		[]byte("---\ndescription: Allergic to penicillin\n---\n# Allergic to penicillin\n\n## Fact\nYou are allergic to penicillin.\n"), 0o644)
	defer func() { hookStdin = os.Stdin }()
	hookStdin = strings.NewReader(`{"session_id":"s","hook_event_name":"UserPromptSubmit","prompt":"which antibiotics should I avoid, given my penicillin allergy?"}`)
	var out, errb bytes.Buffer
	if code := run([]string{"hook", "prompt", "--repo", repo}, &out, &errb); code != 0 || errb.Len() != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	var o struct {
		HookSpecificOutput struct{ HookEventName, AdditionalContext string } `json:"hookSpecificOutput"`
	}
	if err := json.Unmarshal(out.Bytes(), &o); err != nil || o.HookSpecificOutput.HookEventName != "UserPromptSubmit" ||
		!strings.Contains(o.HookSpecificOutput.AdditionalContext, "user_memory/allergic-to-penicillin.md") {
		t.Errorf("%v: %s", err, out.String())
	}
	out.Reset()
	hookStdin = strings.NewReader(`{"prompt":"zzzz qqqq"}`)
	if code := run([]string{"hook", "prompt", "--repo", repo}, &out, &errb); code != 0 || out.Len() != 0 {
		t.Errorf("no match: exit %d, %q", code, out.String())
	}
}
