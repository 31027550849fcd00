package harness

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/mindmount/mindmount/memgraph"
)

// hookMemory is a memory folder (no git: nothing is held back) with one
// fact, and the Memory func that finds it.
func hookMemory(t *testing.T) (string, func() (string, error)) {
	t.Helper()
	mem, _ := newMemory(t)
	os.MkdirAll(filepath.Join(mem, "user_memory"), 0o755)
	os.WriteFile(filepath.Join(mem, "user_memory", "allergy.md"), []byte("---\ndescription: Allergic to penicillin\n---\n# Allergy\n\n## Fact\nThe user is allergic to penicillin.\n"), 0o644)
	return mem, func() (string, error) { return mem, nil }
}

// TestHookFailures: every bad call is an error; a session-start hook still
// prints an empty context in the harness's shape (Codex rejects anything
// else), every other event prints nothing.
func TestHookFailures(t *testing.T) {
	_, memory := hookMemory(t)
	noMemory := func() (string, error) { return "", errors.New("no memory") }
	for _, tc := range []struct {
		name           string
		event, harness string
		memory         func() (string, error)
		payload        string
	}{
		{"unknown harness", EventStop, "vim", memory, `{}`},
		{"unknown event", "bogus", ClaudeCode, memory, `{}`},
		{"bad payload", EventStop, ClaudeCode, memory, `not json`},
		{"bad payload at start", EventSessionStart, ClaudeCode, memory, `not json`},
		{"no memory", EventSessionStart, Codex, noMemory, `{}`},
		{"no transcript", EventStop, ClaudeCode, memory, `{"session_id":"s1","transcript_path":"/nonexistent/x.jsonl"}`},
		{"no session", EventSessionEnd, ClaudeCode, memory, `{"transcript_path":"/x.jsonl"}`},
	} {
		var out bytes.Buffer
		err := Hook(HookOptions{Event: tc.event, Harness: tc.harness, Budget: DefaultBudget, K: 3, Memory: tc.memory, Payload: strings.NewReader(tc.payload), Out: &out})
		want := ""
		if tc.event == EventSessionStart {
			want = string(ContextOutput(tc.harness, tc.event, ""))
		}
		if err == nil || out.String() != want {
			t.Errorf("%s: error %v, output %q, want an error and %q", tc.name, err, out.String(), want)
		}
	}
}

// TestHookSessionStartBudget: the context fits the budget however large
// the memory, says when it was cut, and names the memory.
func TestHookSessionStartBudget(t *testing.T) {
	mem, memory := hookMemory(t)
	for i := 0; i < 200; i++ {
		name := filepath.Join(mem, "user_memory", "fact-"+strings.Repeat("x", i%7)+string(rune('a'+i%26))+"-"+strconv.Itoa(i)+".md")
		os.WriteFile(name, []byte("---\ndescription: A fairly long description of fact number "+strconv.Itoa(i)+" that takes room\n---\n# Fact\n\n## Fact\nSomething.\n"), 0o644)
	}
	for _, budget := range []int{1500, 4000, DefaultBudget} {
		var out bytes.Buffer
		if err := Hook(HookOptions{Event: EventSessionStart, Harness: ClaudeCode, Budget: budget, Memory: memory, Payload: strings.NewReader(`{"session_id":"s"}`), Out: &out}); err != nil {
			t.Fatal(err)
		}
		var o struct {
			HookSpecificOutput struct{ AdditionalContext string } `json:"hookSpecificOutput"`
		}
		if err := json.Unmarshal(out.Bytes(), &o); err != nil {
			t.Fatalf("budget %d: %v\n%s", budget, err, out.String())
		}
		c := o.HookSpecificOutput.AdditionalContext
		if len(c) > budget || !strings.Contains(c, "truncated") || !strings.Contains(c, mem) {
			t.Errorf("budget %d: %d bytes:\n%s", budget, len(c), c)
		}
	}
}

// TestHookPrompt: a prompt hook adds the memories that match the prompt,
// and nothing at all when none does or the prompt is empty.
func TestHookPrompt(t *testing.T) {
	_, memory := hookMemory(t)
	for prompt, want := range map[string]string{
		"which antibiotics fit my penicillin allergy?": "allergy.md",
		"zzzz qqqq": "",
		"   ":       "",
	} {
		var out bytes.Buffer
		p, _ := json.Marshal(Payload{SessionID: "s", Prompt: prompt})
		if err := Hook(HookOptions{Event: EventPrompt, Harness: GeminiCLI, Budget: DefaultBudget, K: 3, Memory: memory, Payload: bytes.NewReader(p), Out: &out}); err != nil {
			t.Fatal(err)
		}
		if (want == "") != (out.Len() == 0) || !strings.Contains(out.String(), want) || (want != "" && !strings.Contains(out.String(), "BeforeAgent")) {
			t.Errorf("prompt %q: %s", prompt, out.String())
		}
	}
}

// TestHookStopCopies: a stop hook copies the session's new turns into the
// memory; Gemini CLI is told "nothing to add" as JSON.
func TestHookStopCopies(t *testing.T) {
	mem, memory := hookMemory(t)
	src := filepath.Join(t.TempDir(), "t.jsonl")
	appendFile(t, src, mustRead(t, "testdata/claude-code/transcript.jsonl"))
	p, _ := json.Marshal(Payload{SessionID: session, TranscriptPath: src})
	var out bytes.Buffer
	if err := Hook(HookOptions{Event: EventStop, Harness: GeminiCLI, Memory: memory, Payload: bytes.NewReader(p), Out: &out}); err != nil {
		t.Fatal(err)
	}
	if out.String() != "{}\n" {
		t.Errorf("stdout %q, want {}", out.String())
	}
	b, err := os.ReadFile(filepath.Join(mem, filepath.FromSlash(TranscriptRel(GeminiCLI, session))))
	if err != nil || bytes.Count(b, []byte("\n")) != 3 {
		t.Errorf("copied transcript (%v):\n%s", err, b)
	}
}

// TestCopyReadsTheSetting: with no MaxRead, one call reads at most the
// memory's hook_read_mib: a line longer than that (no newline in 3 MiB) is
// passed over by a piece of at most 1 MiB; with the 8 MiB default the call
// would wait for the line to end and read nothing.
func TestCopyReadsTheSetting(t *testing.T) {
	mem, src := newMemory(t)
	settings := filepath.Join(mem, filepath.FromSlash(memgraph.SettingsFile))
	os.MkdirAll(filepath.Dir(settings), 0o755)
	if err := os.WriteFile(settings, []byte("hook_read_mib: 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	appendFile(t, src, bytes.Repeat([]byte("x"), 3<<20))
	copyOnce(t, mem, src)
	st := readState(mem, filepath.ToSlash(filepath.Join(StateDir, "claude-code-"+session+".state")))
	if st.Offset == 0 || st.Offset > 1<<20 {
		t.Errorf("one call passed over %d bytes, want a piece of at most hook_read_mib (1 MiB)", st.Offset)
	}
}
