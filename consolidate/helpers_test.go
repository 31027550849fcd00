package consolidate

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mindmount/mindmount/consolidate/llm"
	"github.com/mindmount/mindmount/consolidate/llmtest"
	"github.com/mindmount/mindmount/fs/gitrepo"
	"github.com/mindmount/mindmount/fs/tracker"
	"github.com/mindmount/mindmount/memgraph"
)

// testNow is the clock of every scenario, so access-log stamps are known.
var testNow = time.Date(2026, 11, 29, 15, 0, 0, 0, time.UTC)

// env is one repository, a fake model server and a consolidator using the
// real production client of one provider.
type env struct {
	t   *testing.T
	dir string
	g   *memgraph.Graph
	r   *gitrepo.Repo
	srv *llmtest.Server
	p   llm.Provider
	c   *Consolidator
	cfg Config
}

func quietLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// newEnv makes a repository holding files (committed) and a consolidator
// talking to a fresh fake server through provider ("ollama" or "openai").
func newEnv(t *testing.T, provider string, files map[string]string) *env {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git CLI not installed")
	}
	dir := t.TempDir()
	r, err := gitrepo.Init(dir)
	if err != nil {
		t.Fatal(err)
	}
	base := map[string]string{
		"user.md":             "---\ndescription: Who the user is\n---\n# User\n",
		"transcripts/.keep":   "",
		".gitignore":          "*.swp\n.mindmount/cache/\n/transcripts/*\n!/transcripts/.keep\n",
		"user_memory/.keep":   "",
		"character_memory/.k": "",
	}
	for k, v := range files {
		base[k] = v
	}
	var changes []gitrepo.Change
	for rel, data := range base {
		abs := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(abs, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		changes = append(changes, gitrepo.Change{Path: rel, Data: []byte(data)})
	}
	if _, err := r.Commit(changes, "init", gitrepo.Author{Name: "test", Email: "test@mindmount.local"}, testNow.Add(-time.Hour)); err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, dir: dir, r: r, srv: llmtest.New(t)}
	e.p = e.provider(provider)
	e.cfg = Config{Logger: quietLogger(), Now: func() time.Time { return testNow }, MergeFile: cursorMerger}
	e.restart()
	return e
}

// cursorMerger stands in for hooks.DreamMerger (hooks imports this
// package, so a test here cannot): its cursor rule, positions only move
// forward; every other file changed on both sides is a conflict, as
// without a merger.
func cursorMerger(rel string, _, ours, theirs []byte, _ func(string) bool) ([]byte, bool, string, []byte, error) {
	if rel != CursorFile || ours == nil || theirs == nil {
		return nil, false, "", nil, fmt.Errorf("%s: no stand-in rule merges it", rel)
	}
	o, err := ParseCursor(ours)
	if err != nil {
		return nil, false, "", nil, err
	}
	t, err := ParseCursor(theirs)
	if err != nil {
		return nil, false, "", nil, err
	}
	o.Merge(t)
	return o.Render(), false, "", nil, nil
}

func (e *env) provider(name string) llm.Provider {
	switch name {
	case "openai":
		return llm.NewOpenAI(e.srv.OpenAIURL(), "sk-test-key-abcdefghijklmnop", "fake-model")
	default:
		return llm.NewOllama(e.srv.OllamaURL(), "fake-model")
	}
}

// restart forgets every in-memory state, as a process restart would.
func (e *env) restart() {
	e.t.Helper()
	r, err := gitrepo.Open(e.dir)
	if err != nil {
		e.t.Fatal(err)
	}
	g, err := memgraph.Scan(e.dir)
	if err != nil {
		e.t.Fatal(err)
	}
	e.r, e.g = r, g
	e.c = New(tracker.New(g, r, tracker.Config{Logger: quietLogger()}), e.p, e.cfg)
}

func (e *env) write(rel, data string) {
	e.t.Helper()
	abs := filepath.Join(e.dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
		e.t.Fatal(err)
	}
	if err := os.WriteFile(abs, []byte(data), 0o644); err != nil {
		e.t.Fatal(err)
	}
}

// addTranscript drops a transcript into the inbox. Like the tracker, it
// commits nothing: transcripts never reach git (inbox.go).
func (e *env) addTranscript(rel, data string) {
	e.t.Helper()
	e.write(rel, data)
}

// commitFile writes and commits a file, as the tracker would.
func (e *env) commitFile(rel, data string) {
	e.t.Helper()
	e.write(rel, data)
	if _, err := e.r.Commit([]gitrepo.Change{{Path: rel, Data: []byte(data)}}, "add "+rel, gitrepo.Author{Name: "agent", Email: "agent@mindmount.local"}, testNow); err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) read(rel string) string {
	e.t.Helper()
	b, err := os.ReadFile(filepath.Join(e.dir, filepath.FromSlash(rel)))
	if err != nil {
		e.t.Fatal(err)
	}
	return string(b)
}

func (e *env) exists(rel string) bool {
	_, err := os.Lstat(filepath.Join(e.dir, filepath.FromSlash(rel)))
	return err == nil
}

func (e *env) git(args ...string) string {
	e.t.Helper()
	cmd := exec.Command("git", append([]string{"-C", e.dir}, args...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		e.t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// checkGit runs git fsck and checks the work tree is clean.
func (e *env) checkGit() {
	e.t.Helper()
	e.git("fsck", "--strict")
	if st := e.git("status", "--porcelain"); strings.TrimSpace(st) != "" {
		e.t.Fatalf("work tree not clean:\n%s", st)
	}
}

func (e *env) commits() int {
	e.t.Helper()
	var n int
	fmt.Sscan(e.git("rev-list", "--count", "HEAD"), &n)
	return n
}

// script queues one extraction answer and one decision answer.
func (e *env) script(facts []Fact, decisions []Decision) {
	if facts == nil {
		facts = []Fact{}
	}
	e.srv.Queue(llmtest.KindExtract, llmtest.Reply{Content: llmtest.JSON(map[string]any{"facts": facts})})
	if decisions != nil {
		e.srv.Queue(llmtest.KindDecide, llmtest.Reply{Content: llmtest.JSON(map[string]any{"decisions": decisions})})
	}
}

func (e *env) run() Report {
	e.t.Helper()
	rep, err := e.c.Run(context.Background())
	if err != nil {
		e.t.Fatalf("run: %v", err)
	}
	return rep
}

func (e *env) mem(rel string) *memgraph.Memory {
	e.t.Helper()
	m, probs := memgraph.Parse(rel, []byte(e.read(rel)))
	if len(probs) > 0 {
		e.t.Fatalf("%s invalid: %v", rel, probs)
	}
	return m
}

func (e *env) cursor() *Cursor {
	e.t.Helper()
	data, _, err := e.r.ReadHead(CursorFile)
	if err != nil {
		e.t.Fatal(err)
	}
	c, err := ParseCursor(data)
	if err != nil {
		e.t.Fatal(err)
	}
	return c
}

// memoryFile renders a seed-format memory for fixtures.
func memoryFile(desc, title, fact string, uses ...string) string {
	s := "---\ndescription: " + desc + "\nstatus: active\n---\n# " + title + "\n\n## Fact\n" + fact + "\n\n## Access log\n"
	for _, u := range uses {
		s += "used, " + u + "\n"
	}
	return s
}

func jsonl(msgs ...string) string {
	var b strings.Builder
	for i, m := range msgs {
		role := "user"
		if i%2 == 1 {
			role = "assistant"
		}
		fmt.Fprintf(&b, "{\"role\":%q,\"content\":%q}\n", role, m)
	}
	return b.String()
}

// both runs f once per provider.
func both(t *testing.T, f func(t *testing.T, provider string)) {
	for _, p := range []string{"ollama", "openai"} {
		t.Run(p, func(t *testing.T) { f(t, p) })
	}
}
