package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/mindmount/mindmount/consolidate/llm"
	"github.com/mindmount/mindmount/fs/gitrepo"
	"github.com/mindmount/mindmount/fs/mount"
	"github.com/mindmount/mindmount/memgraph"
)

// doctorCommand is "mindmount doctor".
var doctorCommand = newCommand(command{
	name:    "doctor",
	usage:   "doctor [REPO]",
	summary: "check FUSE, git, the model, the harness hooks and the daemon, and say what to fix",
	help: `Checks what mindmount needs on this machine and prints one line per
check: "ok" with what was found, or "FAIL" with what to do about it.

  fuse      /dev/fuse opens, and fusermount3 is there (set-user-ID root for
            a normal user); without FUSE, "mindmount watch" still works
  git       the git command, which history commands and the hooks use
  model     the configured model answers one short call within --deadline
            (MINDMOUNT_LLM, MINDMOUNT_MODEL and the rest, as for mount)
  harness   every agent-harness file that names mindmount (Claude Code,
            Gemini CLI, Codex, OpenCode; user and this folder's project
            files): the mindmount it runs exists, and the memory it names is
            a repository or a mount that is up

With REPO also:

  repo      REPO is a valid mindmount repository
  hooks     REPO's git pre-commit hook is mindmount's
  daemon    whether a daemon (mount, watch, mcp, ui) serves REPO now

Exits 1 when a check fails.`,
}, runDoctor)

// doctorOptions are the flags of "mindmount doctor".
type doctorOptions struct {
	providerOptions
	deadline time.Duration
}

func (o *doctorOptions) AddFlags(fl *flag.FlagSet) {
	fl.StringVar(&o.LLM, "llm", "", "model provider: ollama, openai or anthropic (default $MINDMOUNT_LLM, else ollama)")
	fl.StringVar(&o.Model, "model", "", "chat model (default $MINDMOUNT_MODEL, else the provider's default)")
	fl.DurationVar(&o.deadline, "deadline", 30*time.Second, "how long the model may take to answer the one test call")
}

// finding is one check's outcome: ok with what was found, or a problem
// and its fix.
type finding struct {
	name, found, fix string
	failed           bool
}

// errDoctorFound means at least one check failed; each says what to fix.
var errDoctorFound = errors.New("something needs fixing")

// runDoctor runs every check and prints one line (two for a failure) each.
func runDoctor(ctx context.Context, o *doctorOptions, args []string) error {
	if len(args) > 1 {
		return errUsage
	}
	home, _ := os.UserHomeDir()
	cwd, _ := os.Getwd()
	found := []finding{checkFUSE(), checkGit(), checkModel(ctx, o)}
	found = append(found, checkHarnesses(harnessFiles(home, cwd), home)...)
	if len(args) == 1 {
		found = append(found, checkRepo(args[0])...)
	}
	failed := 0
	for _, f := range found {
		if f.failed {
			failed++
			fmt.Fprintf(stdout, "FAIL  %-8s %s\n      fix: %s\n", f.name, f.found, f.fix)
			continue
		}
		fmt.Fprintf(stdout, "ok    %-8s %s\n", f.name, f.found)
	}
	if failed > 0 {
		fmt.Fprintf(stdout, "%d %s to fix.\n", failed, memgraph.Plural(failed, "thing", "things"))
		return exitError{1}
	}
	fmt.Fprintln(stdout, "No problem found.")
	return nil
}

// checkFUSE is the fuse finding: what the mount would find before it
// mounts.
func checkFUSE() finding {
	helper, err := mount.CheckFUSE()
	if err != nil {
		return finding{name: "fuse", found: err.Error(), fix: `make FUSE usable as the line says, or use "mindmount watch REPO" (no FUSE needed)`, failed: true}
	}
	return finding{name: "fuse", found: "/dev/fuse opens; " + cmpOr(helper, "no fusermount3 (as root, none is needed)")}
}

// cmpOr is s, or alt when s is empty.
func cmpOr(s, alt string) string {
	if s == "" {
		return alt
	}
	return s
}

// checkGit is the git finding.
func checkGit() finding {
	path, err := exec.LookPath("git")
	if err != nil {
		return finding{name: "git", found: "no git command on PATH", fix: "install git (apt install git)", failed: true}
	}
	out, err := exec.Command(path, "--version").Output()
	if err != nil {
		return finding{name: "git", found: path + " does not run: " + err.Error(), fix: "reinstall git", failed: true}
	}
	return finding{name: "git", found: strings.TrimSpace(string(out)) + " (" + path + ")"}
}

// checkModel makes one short call to the configured model within
// o.deadline.
func checkModel(ctx context.Context, o *doctorOptions) finding {
	p, err := newProvider(o.providerOptions)
	if err != nil {
		return finding{name: "model", found: err.Error(), fix: llm.NoModelHelp, failed: true}
	}
	where := p.Name() + " " + p.Model()
	if e, ok := p.(llm.Endpoint); ok {
		where += " at " + e.Endpoint()
	}
	ctx, cancel := context.WithTimeout(ctx, o.deadline)
	defer cancel()
	if _, err := p.Chat(ctx, llm.ChatRequest{System: "Answer with one word.", Prompt: "Say ok."}); err != nil {
		if ctx.Err() != nil {
			err = fmt.Errorf("no answer within %s", o.deadline)
		}
		return finding{name: "model", found: p.Name() + " " + p.Model() + ": " + memgraph.ClipLine(err.Error(), 300), fix: llm.NoModelHelp + "; without a model everything but consolidation and /v1/chat works", failed: true}
	}
	return finding{name: "model", found: where + " answers"}
}

// harnessFiles are the agent-harness files hooks install writes, user and
// project scope, that exist.
func harnessFiles(home, cwd string) []string {
	var files []string
	for _, f := range []string{
		filepath.Join(home, ".claude", "settings.json"), filepath.Join(home, ".claude.json"),
		filepath.Join(home, ".gemini", "settings.json"), filepath.Join(home, ".codex", "hooks.json"),
		filepath.Join(home, ".codex", "config.toml"), filepath.Join(home, ".config", "opencode", "opencode.json"),
		filepath.Join(cwd, ".claude", "settings.local.json"), filepath.Join(cwd, ".mcp.json"),
		filepath.Join(cwd, ".gemini", "settings.json"), filepath.Join(cwd, "opencode.json"),
	} {
		if fi, err := os.Stat(f); err == nil && fi.Mode().IsRegular() && !slices.Contains(files, f) {
			files = append(files, f)
		}
	}
	return files
}

// hookMention finds what a harness file runs of mindmount: the binary
// and, after --repo or mcp, the memory it names.
var (
	harnessBinary = lazyRegexp(`([^\s"'\\]*mindmount)["']?\s+(?:hook|mcp)\b`)
	harnessMemory = lazyRegexp(`(?:--repo\s+|--repo=|"mcp",\s*"|mcp\s+)["']?([^\s"'\\,]+)`)
)

// checkHarnesses checks every harness file that names mindmount.
func checkHarnesses(files []string, home string) []finding {
	var out []finding
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil || !strings.Contains(string(data), "mindmount") {
			continue
		}
		out = append(out, checkHarnessFile(f, string(data), home))
	}
	if len(out) == 0 {
		out = append(out, finding{name: "harness", found: "no agent harness is wired to mindmount (mindmount hooks install --harness claude-code MNT)"})
	}
	return out
}

// checkHarnessFile checks one harness file's mindmount entries.
func checkHarnessFile(f, text, home string) finding {
	expand := func(p string) string {
		for _, v := range []string{"${HOME}", "$HOME", "{env:HOME}", "~"} {
			if rest, ok := strings.CutPrefix(p, v); ok {
				return home + rest
			}
		}
		return p
	}
	for _, m := range harnessBinary().FindAllStringSubmatch(text, -1) {
		bin := expand(m[1])
		if _, err := exec.LookPath(bin); err != nil {
			return finding{name: "harness", found: f + " runs " + bin + ", which is not there", fix: "install mindmount (go install ./cmd/mindmount) and run mindmount hooks install again", failed: true}
		}
	}
	var memories []string
	for _, m := range harnessMemory().FindAllStringSubmatch(text, -1) {
		if p := expand(m[1]); filepath.IsAbs(p) && !slices.Contains(memories, p) {
			memories = append(memories, p)
		}
	}
	for _, p := range memories {
		if _, err := os.Stat(filepath.Join(p, ".git")); err == nil {
			continue // a repository
		}
		if _, err := os.Stat(filepath.Join(p, memgraph.ContextFile)); err != nil {
			return finding{name: "harness", found: f + " names the memory " + p + ", which is not mounted", fix: "start its mount: mindmount mount REPO " + p + " (or mindmount service install REPO " + p + ", so it comes back after a reboot)", failed: true}
		}
	}
	return finding{name: "harness", found: f + ": " + cmpOr(strings.Join(memories, ", "), "mindmount entries") + " up"}
}

// checkRepo checks REPO: valid, its pre-commit hook, its daemon.
func checkRepo(dir string) []finding {
	if err := requireMindmountRepo(dir); err != nil {
		return []finding{{name: "repo", found: err.Error(), fix: "mindmount init " + dir + " (adds only what is missing)", failed: true}}
	}
	out := []finding{{name: "repo", found: dir + " is a mindmount repository"}}
	r, err := gitrepo.Open(dir)
	if err != nil {
		return append(out, finding{name: "repo", found: err.Error(), fix: "mindmount check " + dir, failed: true})
	}
	hook, _ := os.ReadFile(filepath.Join(r.GitDir(), "hooks", "pre-commit"))
	if strings.Contains(string(hook), "mindmount") {
		out = append(out, finding{name: "hooks", found: "the pre-commit hook is mindmount's"})
	} else {
		out = append(out, finding{name: "hooks", found: "no mindmount pre-commit hook: a plain git commit is not checked", fix: "mindmount hooks install " + dir, failed: true})
	}
	unlock, err := r.LockDaemon()
	switch {
	case errors.Is(err, gitrepo.ErrDaemonRunning):
		out = append(out, finding{name: "daemon", found: "a daemon serves " + dir})
	case err != nil:
		out = append(out, finding{name: "daemon", found: err.Error(), fix: "mindmount status " + dir, failed: true})
	default:
		unlock()
		out = append(out, finding{name: "daemon", found: "none serves " + dir + " (commands write it themselves; mindmount mount " + dir + " MNT, or mindmount service install, to serve it)"})
	}
	return out
}
