package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mindmount/mindmount/consolidate/llmtest"
	"github.com/mindmount/mindmount/hooks/harness"
)

// harnessTestdata is the hooks/harness package's recorded payloads and
// transcripts.
const harnessTestdata = "../../hooks/harness/testdata/claude-code"

// installedCommand returns the command mindmount installed for event in a
// Claude Code settings file.
func installedCommand(t *testing.T, settings, event string) string {
	t.Helper()
	var s struct {
		Hooks map[string][]struct {
			Hooks []struct{ Command string } `json:"hooks"`
		} `json:"hooks"`
	}
	b, err := os.ReadFile(settings)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	for _, g := range s.Hooks[event] {
		for _, h := range g.Hooks {
			if strings.Contains(h.Command, " hook ") {
				return h.Command
			}
		}
	}
	t.Fatalf("no mindmount %s hook in %s:\n%s", event, settings, b)
	return ""
}

// runInstalled runs an installed hook command the way Claude Code does
// (through the shell, payload on stdin) and returns stdout and stderr;
// a hook must always exit 0.
func runInstalled(t *testing.T, home, command string, payload []byte) (string, string) {
	t.Helper()
	cmd := exec.Command("sh", "-c", command)
	cmd.Env = append(os.Environ(), "HOME="+home)
	cmd.Dir = home
	cmd.Stdin = bytes.NewReader(payload)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s: %v\nstderr: %s", command, err, errb.String())
	}
	return out.String(), errb.String()
}

// payloadFor reads a recorded payload and points it at transcript.
func payloadFor(t *testing.T, name, transcript string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(harnessTestdata, name))
	if err != nil {
		t.Fatal(err)
	}
	q, _ := json.Marshal(transcript)
	return bytes.Replace(b, []byte(`"TRANSCRIPT"`), q, 1)
}

// TestHarnessClaudeCodeEndToEnd is the scenario with the built
// binary: "mindmount hooks install --harness claude-code" into a fresh HOME
// wires Claude Code to a mounted memory; the installed SessionStart
// command, fed a recorded payload, prints the context in Claude Code's
// JSON; the installed Stop command copies the recorded session transcript
// into the mount, and the idle trigger turns it into one consolidation
// commit that saw the user's words and none of the tool noise.
func TestHarnessClaudeCodeEndToEnd(t *testing.T) {
	if _, err := os.Stat("/dev/fuse"); err != nil {
		t.Skip("no /dev/fuse")
	}
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git CLI not installed")
	}
	srv := llmtest.New(t)
	srv.Queue(llmtest.KindExtract, llmtest.Reply{Content: `{"facts":[{"kind":"user","slug":"has-cat-miso","description":"Has a grey cat called Miso","fact":"You have a grey cat called Miso.","episode":"You asked for a cat sitter before a trip to Lisbon."}]}`})
	srv.Queue(llmtest.KindDecide, llmtest.Reply{Content: `{"decisions":[{"fact":0,"action":"ADD","target":"","description":"","text":""}]}`})

	repo, mnt, daemon, logs := mountWithFakeModel(t, srv, "500ms")

	home := t.TempDir()
	install := exec.Command(mindmountBinary(t), "hooks", "install", "--harness", "claude-code", mnt)
	install.Env = append(os.Environ(), "HOME="+home)
	install.Dir = home
	if out, err := install.CombinedOutput(); err != nil {
		t.Fatalf("hooks install: %v\n%s", err, out)
	}
	settings := filepath.Join(home, ".claude", "settings.json")

	// SessionStart: the context, in Claude Code's shape, within budget.
	stdout, stderr := runInstalled(t, home, installedCommand(t, settings, "SessionStart"), payloadFor(t, "session-start.json", "/nonexistent"))
	var out struct {
		HookSpecificOutput struct {
			HookEventName     string `json:"hookEventName"`
			AdditionalContext string `json:"additionalContext"`
		} `json:"hookSpecificOutput"`
	}
	if err := json.Unmarshal([]byte(stdout), &out); err != nil {
		t.Fatalf("session-start output is not JSON: %v\n%s\nstderr: %s", err, stdout, stderr)
	}
	ctxText := out.HookSpecificOutput.AdditionalContext
	if out.HookSpecificOutput.HookEventName != "SessionStart" || !strings.Contains(ctxText, mnt) ||
		!strings.Contains(ctxText, "user_memory/") || len(ctxText) > harness.DefaultBudget {
		t.Errorf("session-start output (%d bytes):\n%s", len(ctxText), stdout)
	}
	// The persona's body (character.md without its frontmatter) is there.
	character, err := os.ReadFile(filepath.Join(mnt, "character.md"))
	if err != nil {
		t.Fatal(err)
	}
	body := string(character)
	if i := strings.Index(body, "\n---\n"); strings.HasPrefix(body, "---\n") && i > 0 {
		body = body[i+5:]
	}
	if para := strings.SplitN(strings.TrimSpace(body), "\n\n", 3); len(para) < 2 || !strings.Contains(ctxText, para[1]) {
		t.Errorf("context lacks character.md's text %q:\n%s", para, ctxText)
	}

	// Stop: the session's transcript reaches the mount's inbox.
	transcript := filepath.Join(t.TempDir(), "session.jsonl")
	data, err := os.ReadFile(filepath.Join(harnessTestdata, "transcript.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(transcript, data, 0o600); err != nil {
		t.Fatal(err)
	}
	stop := installedCommand(t, settings, "Stop")
	if _, stderr := runInstalled(t, home, stop, payloadFor(t, "stop.json", transcript)); stderr != "" {
		t.Errorf("stop hook wrote to stderr: %s", stderr)
	}
	// A second Stop with nothing new changes nothing.
	runInstalled(t, home, stop, payloadFor(t, "stop.json", transcript))
	waitFor(t, func() bool {
		b, _ := os.ReadFile(filepath.Join(mnt, "user_memory.md"))
		return strings.Contains(string(b), "user_memory/has-cat-miso.md")
	}, "consolidated memory in the mount's user_memory.md")
	stopMindmount(t, daemon, logs)

	if n := strings.Count(gitOut(t, repo, "log", "--merges", "--format=%an"), "consolidator"); n != 1 {
		t.Fatalf("%d consolidation merges, want 1\nlogs:\n%s", n, logs.String())
	}
	ex := srv.CallsOf(llmtest.KindExtract)
	if len(ex) != 1 {
		t.Fatalf("%d extraction calls", len(ex))
	}
	p := ex[0].Prompt
	if !strings.Contains(p, "Miso") || !strings.Contains(p, "Mrs. Duarte") {
		t.Errorf("the model did not see the conversation:\n%s", p)
	}
	for _, noise := range []string{"ls ~/notes", "neighbours.md", "The user wants a note", "/clear", "Search the notes"} {
		if strings.Contains(p, noise) {
			t.Errorf("tool noise %q reached the model:\n%s", noise, p)
		}
	}
	if tracked := gitOut(t, repo, "ls-files", "transcripts/", ".mindmount/cache/"); strings.Contains(tracked, "claude-code-") || strings.Contains(tracked, "cache") {
		t.Errorf("transcript or copy state in git:\n%s", tracked)
	}
}

// TestHarnessHookNeverFails: a missing transcript, a broken payload, an
// unknown event and a missing memory are each one line on stderr and exit
// status 0, with nothing on stdout but an empty context for session-start.
func TestHarnessHookNeverFails(t *testing.T) {
	repo := filepath.Join(t.TempDir(), "memory")
	runCmd(t, "init", repo)
	unreadable := filepath.Join(t.TempDir(), "locked.jsonl")
	os.WriteFile(unreadable, []byte(`{"role":"user","content":"hi"}`+"\n"), 0o000)
	type hookCase struct {
		args    []string
		payload string
	}
	cases := []hookCase{
		{[]string{"hook", "stop", "--repo", repo}, `{"session_id":"s1","transcript_path":"/nonexistent/x.jsonl","hook_event_name":"Stop"}`},
		{[]string{"hook", "stop", "--repo", repo}, `{"session_id":"s1","transcript_path":"` + t.TempDir() + `","hook_event_name":"Stop"}`},
		{[]string{"hook", "session-end", "--repo", repo}, `{"session_id":"s1"}`},
		{[]string{"hook", "stop", "--repo", repo}, `not json`},
		{[]string{"hook", "session-start", "--repo", filepath.Join(repo, "nope")}, `{}`},
		{[]string{"hook", "session-start"}, `{}`},
		{[]string{"hook", "bogus", "--repo", repo}, `{}`},
		{[]string{"hook", "stop", "--harness", "vim", "--repo", repo}, `{}`},
	}
	if os.Geteuid() != 0 { // root reads a 0000 file
		cases = append(cases, hookCase{[]string{"hook", "stop", "--repo", repo}, `{"session_id":"s1","transcript_path":"` + unreadable + `"}`})
	}
	for _, tc := range cases {
		t.Setenv("MINDMOUNT_REPO", "")
		hookStdin = strings.NewReader(tc.payload)
		var out, errb bytes.Buffer
		code := run(tc.args, &out, &errb)
		wantOut := ""
		if tc.args[1] == "session-start" {
			wantOut = `{"hookSpecificOutput":{"hookEventName":"SessionStart","additionalContext":""}}` + "\n"
		}
		if code != 0 || out.String() != wantOut || strings.Count(errb.String(), "\n") != 1 {
			t.Errorf("mindmount %s <<< %s: exit %d, stdout %q, stderr %q", strings.Join(tc.args, " "), tc.payload, code, out.String(), errb.String())
		}
	}
	hookStdin = os.Stdin
}
