package main

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

	"github.com/mindmount/mindmount/hooks/harness"
	"github.com/mindmount/mindmount/memgraph"
	"github.com/mindmount/mindmount/memgraph/recall"
)

// hookStdin is where a hook reads the harness's payload; tests swap it.
var hookStdin io.Reader = os.Stdin

// runHarnessHook handles an agent harness's lifecycle event. It never
// fails the agent: whatever goes wrong is one line on stderr and exit
// status 0, because a hook that errors can stall or block a session.
func runHarnessHook(event string, opts hookOptions) error {
	if err := harnessHook(event, opts); err != nil {
		fmt.Fprintf(stderr, "mindmount hook %s: %s\n", event, memgraph.ErrorLine(err.Error()))
		if event == harness.EventSessionStart && harness.KnownHarness(opts.harness) {
			// Codex rejects a SessionStart hook whose stdout is not its
			// JSON shape; an empty context is always valid.
			stdout.Write(harness.ContextOutput(opts.harness, event, ""))
		}
	}
	return nil
}

func harnessHook(event string, opts hookOptions) error {
	if !harness.KnownHarness(opts.harness) {
		return fmt.Errorf("unknown --harness %q (want one of %s)", opts.harness, strings.Join(harness.Harnesses, ", "))
	}
	switch event {
	case harness.EventSessionStart, harness.EventPrompt, harness.EventStop, harness.EventSessionEnd, harness.EventPreCompact:
	default:
		return fmt.Errorf("unknown event %q (want session-start, prompt, stop, session-end or pre-compact)", event)
	}
	p, err := harness.ParsePayload(hookStdin)
	if err != nil {
		return err
	}
	dir, err := hookMemory(opts.repo)
	if err != nil {
		return err
	}
	switch event {
	case harness.EventSessionStart:
		guide := harness.Guide(dir)
		text := hookContext(dir, opts.budget-len(guide)-1)
		_, err = stdout.Write(harness.ContextOutput(opts.harness, event, text+"\n"+guide))
		return err
	case harness.EventPrompt:
		text := recallText(dir, p.Prompt, opts.k)
		if text == "" {
			return nil
		}
		_, err = stdout.Write(harness.ContextOutput(opts.harness, event, harness.Fit(text, opts.budget)))
		return err
	}
	if opts.harness == harness.GeminiCLI {
		// Gemini CLI parses a hook's stdout as JSON: say "nothing to add".
		fmt.Fprintln(stdout, "{}")
	}
	n, err := harness.Copy(harness.CopyOptions{Memory: dir, Harness: opts.harness, SessionID: p.SessionID, Source: p.TranscriptPath, MaxRead: hookReadLimit(dir)})
	if err != nil {
		return err
	}
	// The path and a count, never the text (the transcripts rule).
	slog.Debug("transcript copied", "path", harness.TranscriptRel(opts.harness, p.SessionID), "messages", n)
	return nil
}

// hookMemory finds the memory a hook serves: --repo, else $MINDMOUNT_REPO.
func hookMemory(flagRepo string) (string, error) {
	dir := flagRepo
	if dir == "" {
		dir = os.Getenv("MINDMOUNT_REPO")
	}
	if dir == "" {
		return "", errors.New("no memory: pass --repo DIR or set MINDMOUNT_REPO")
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	return dir, requireMindmountRepo(dir)
}

// fuseSuperMagic is the f_type statfs reports for a FUSE mount.
const fuseSuperMagic = 0x65735546

// isFuseMount reports whether dir is the root of a FUSE mount (a mindmount
// mount).
func isFuseMount(dir string) bool {
	var st unix.Statfs_t
	return unix.Statfs(dir, &st) == nil && st.Type == fuseSuperMagic
}

// hookContext returns the compiled context within budget bytes. A mount
// already serves CONTEXT.md, cached by revision, so reading it is the
// cheap way when it fits; otherwise the memory is scanned and compiled
// here.
func hookContext(dir string, budget int) string {
	if budget <= 0 {
		return ""
	}
	if isFuseMount(dir) {
		// Larger than the budget: compile it again below, which cuts by
		// section and says what it left out, rather than at a line.
		if b, err := os.ReadFile(filepath.Join(dir, memgraph.ContextFile)); err == nil && len(b) <= budget {
			return string(b)
		}
	}
	g, err := scanServed(dir)
	if err != nil {
		return ""
	}
	return string(g.Context(memgraph.ContextOptions{MaxBytes: budget}))
}

// recallText lists the memories that best match the prompt, keyword
// recall only: a hook on every prompt must not wait for a model.
func recallText(dir, prompt string, k int) string {
	if strings.TrimSpace(prompt) == "" || k <= 0 {
		return ""
	}
	g, err := scanServed(dir)
	if err != nil {
		return ""
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	hits := g.RecallContext(ctx, prompt, recall.Options{K: k})
	if len(hits) == 0 {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Memories that may matter for this prompt (files under %s):\n", dir)
	b.WriteString(memgraph.RecallLines(hits))
	return b.String()
}

// installHarness wires (or unwires) an agent harness to the memory at target.
func installHarness(name, scope, target string, uninstall bool) error {
	mem, err := filepath.Abs(target)
	if err != nil {
		return err
	}
	if !uninstall {
		if err := requireMindmountRepo(mem); err != nil {
			return err
		}
	}
	bin, err := os.Executable()
	if err != nil {
		return err
	}
	if real, err := filepath.EvalSymlinks(bin); err == nil {
		bin = real
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return err
	}
	project, err := os.Getwd()
	if err != nil {
		return err
	}
	// "mindmount mcp" serves a repository as its one daemon; a mount already
	// has one (and the agent has the mount), so a mount gets no MCP entry.
	mcp := !isFuseMount(mem)
	o := harness.InstallOptions{
		Harness: name, Scope: scope, Home: home, Project: project,
		Memory: mem, Mindmount: bin, MCP: mcp, Env: os.Getenv,
	}
	do, verb := harness.Install, "installed"
	if uninstall {
		do, verb = harness.Uninstall, "uninstalled"
	}
	changes, err := do(o)
	for _, c := range changes {
		if c.Removed {
			fmt.Fprintf(stdout, "mindmount: %s: removed %s (it held only mindmount's entries)", name, c.Path)
		} else {
			fmt.Fprintf(stdout, "mindmount: %s: %s %s in %s", name, verb, c.Note, c.Path)
		}
		if c.Backup != "" {
			fmt.Fprintf(stdout, " (backup: %s)", c.Backup)
		}
		fmt.Fprintln(stdout)
	}
	if err != nil {
		return err
	}
	if len(changes) == 0 {
		fmt.Fprintf(stdout, "mindmount: %s: nothing to change\n", name)
	}
	if !uninstall {
		switch name {
		case harness.Codex:
			fmt.Fprintln(stdout, `mindmount: codex runs the hooks once config.toml has "[features] codex_hooks = true" and you trust them in /hooks`)
		case harness.OpenCode:
			fmt.Fprintln(stdout, "mindmount: opencode reads CONTEXT.md, which exists while the memory is mounted or watched (mindmount mount / mindmount watch)")
		}
	}
	return nil
}

// hookReadLimit is the hook_read_mib setting of the memory at dir in bytes
// (0: the hooks' default).
func hookReadLimit(dir string) int64 {
	b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(memgraph.SettingsFile)))
	if err != nil {
		return 0
	}
	s, _ := memgraph.ParseSettings(b)
	return int64(s.HookReadMiB) << 20
}
