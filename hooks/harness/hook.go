package harness

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/mindmount/mindmount/fs/tracker"
	"github.com/mindmount/mindmount/memgraph"
	"github.com/mindmount/mindmount/memgraph/recall"
)

// HookOptions is one call of "mindmount hook EVENT" by a harness.
type HookOptions struct {
	Event   string // one of the Event constants
	Harness string // a name from Harnesses: the output's shape, the transcript's name
	Budget  int    // bytes of context a session-start or prompt hook adds
	K       int    // memories a prompt hook adds
	// Memory finds the memory the hook serves (the caller's flag or
	// environment, checked to be a memory) as an absolute path. It is
	// called once the event and the payload are known to be good.
	Memory  func() (string, error)
	Payload io.Reader // the harness's JSON (stdin)
	Out     io.Writer // what the harness reads (stdout)
}

// Hook handles one lifecycle event of a harness: session-start prints the
// compiled context and the guide, prompt the memories that match the
// prompt, and stop, session-end and pre-compact copy the session's new
// turns into the memory. On an error from a session-start hook it still
// prints an empty context, because Codex rejects a SessionStart hook whose
// stdout is not its JSON shape, or, when the memory is a mountpoint whose
// mount is down, that news (NotMountedError) as the context of a
// session-start or prompt hook; the caller reports the error and exits 0,
// since a hook that fails can stall or block a session.
func Hook(o HookOptions) error {
	err := hook(o)
	var down *NotMountedError
	switch {
	case errors.As(err, &down) && (o.Event == EventSessionStart || o.Event == EventPrompt) && KnownHarness(o.Harness):
		// The agent hears why its memory is empty, not silence.
		o.Out.Write(ContextOutput(o.Harness, o.Event, down.Error()+"\n"))
	case err != nil && o.Event == EventSessionStart && KnownHarness(o.Harness):
		o.Out.Write(ContextOutput(o.Harness, o.Event, ""))
	}
	return err
}

func hook(o HookOptions) error {
	if !KnownHarness(o.Harness) {
		return fmt.Errorf("unknown --harness %q (want one of %s)", o.Harness, strings.Join(Harnesses, ", "))
	}
	switch o.Event {
	case EventSessionStart, EventPrompt, EventStop, EventSessionEnd, EventPreCompact:
	default:
		return fmt.Errorf("unknown event %q (want session-start, prompt, stop, session-end or pre-compact)", o.Event)
	}
	p, err := ParsePayload(o.Payload)
	if err != nil {
		return err
	}
	dir, err := o.Memory()
	if err != nil {
		return err
	}
	switch o.Event {
	case EventSessionStart:
		guide := Guide(dir)
		text := Context(dir, o.Budget-len(guide)-1)
		_, err = o.Out.Write(ContextOutput(o.Harness, o.Event, text+"\n"+guide))
		return err
	case EventPrompt:
		text := recallText(dir, p.Prompt, o.K)
		if text == "" {
			return nil
		}
		_, err = o.Out.Write(ContextOutput(o.Harness, o.Event, Fit(text, o.Budget)))
		return err
	}
	if o.Harness == GeminiCLI {
		// Gemini CLI parses a hook's stdout as JSON: say "nothing to add".
		fmt.Fprintln(o.Out, "{}")
	}
	n, err := Copy(CopyOptions{Memory: dir, Harness: o.Harness, SessionID: p.SessionID, Source: p.TranscriptPath})
	if err != nil {
		return err
	}
	// The path and a count, never the text (the transcripts rule).
	slog.Debug("transcript copied", "path", TranscriptRel(o.Harness, p.SessionID), "messages", n)
	return nil
}

// fuseSuperMagic is the f_type statfs reports for a FUSE mount.
const fuseSuperMagic = 0x65735546

// mounted reports whether dir is the root of a FUSE mount (a mindmount
// mount).
func mounted(dir string) bool {
	var st unix.Statfs_t
	return unix.Statfs(dir, &st) == nil && st.Type == fuseSuperMagic
}

// ServeMCP reports whether a harness wired to the memory at dir also
// needs "mindmount mcp DIR": a repository does; a mount already has its
// daemon, and the agent has the mount.
func ServeMCP(dir string) bool { return !mounted(dir) }

// Context returns the compiled context of the memory at dir within budget
// bytes, as a model may see it (tracker.ScanServed). A mount already
// serves CONTEXT.md, cached by revision, so reading it is the cheap way
// when it fits; otherwise the memory is scanned and compiled here.
func Context(dir string, budget int) string {
	if budget <= 0 {
		return ""
	}
	if mounted(dir) {
		// Larger than the budget: compile it again below, which cuts by
		// section and says what it left out, rather than at a line.
		if b, err := os.ReadFile(filepath.Join(dir, memgraph.ContextFile)); err == nil && len(b) <= budget {
			return string(b)
		}
	}
	g, err := tracker.ScanServed(dir)
	if err != nil {
		return ""
	}
	return string(g.Context(memgraph.ContextOptions{MaxBytes: budget}))
}

// recallTimeout bounds a prompt hook's recall: it runs before every
// prompt, so it must never keep the user waiting long.
const recallTimeout = 2 * time.Second

// recallText lists the memories that best match the prompt, keyword
// recall only: a hook on every prompt must not wait for a model.
func recallText(dir, prompt string, k int) string {
	if strings.TrimSpace(prompt) == "" || k <= 0 {
		return ""
	}
	g, err := tracker.ScanServed(dir)
	if err != nil {
		return ""
	}
	ctx, cancel := context.WithTimeout(context.Background(), recallTimeout)
	defer cancel()
	hits, _ := g.RecallScoped(ctx, prompt, recall.Options{K: k}, memgraph.ScopeAll)
	if len(hits) == 0 {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Memories that may matter for this prompt (files under %s):\n", dir)
	b.WriteString(memgraph.RecallLines(hits))
	return b.String()
}

// readLimit is the hook_read_mib setting of the memory at dir in bytes
// (0: not set).
func readLimit(dir string) int64 {
	b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(memgraph.SettingsFile)))
	if err != nil {
		return 0
	}
	s, _ := memgraph.ParseSettings(b)
	return int64(s.HookReadMiB) << 20
}

// InstallAdvice is what the user must still do by hand after installing
// the harness's entries ("" when nothing).
func InstallAdvice(name string) string {
	switch name {
	case Codex:
		return `codex runs the hooks once config.toml has "[features] codex_hooks = true" and you trust them in /hooks`
	case OpenCode:
		return "opencode reads CONTEXT.md, which exists while the memory is mounted or watched (mindmount mount / mindmount watch)"
	}
	return ""
}
