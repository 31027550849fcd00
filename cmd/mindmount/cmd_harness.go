package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/mindmount/mindmount/hooks/harness"
	"github.com/mindmount/mindmount/memgraph"
)

// hookStdin is where a hook reads the harness's payload; tests swap it.
var hookStdin io.Reader = os.Stdin

// runHarnessHook handles an agent harness's lifecycle event (the work is
// harness.Hook). It never fails the agent: whatever goes wrong is one line
// on stderr and exit status 0, because a hook that errors can stall or
// block a session.
func runHarnessHook(event string, opts hookOptions) error {
	err := harness.Hook(harness.HookOptions{
		Event: event, Harness: opts.harness, Budget: opts.budget, K: opts.k,
		Memory:  func() (string, error) { return hookMemory(opts.repo) },
		Payload: hookStdin, Out: stdout,
	})
	if err != nil {
		fmt.Fprintf(stderr, "mindmount hook %s: %s\n", event, memgraph.ErrorLine(err.Error()))
	}
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
	if err := requireMindmountRepo(dir); err != nil {
		if down := harness.NotMounted(dir); down != nil {
			return "", down
		}
		return "", err
	}
	return dir, nil
}

// installHarness wires (or unwires) an agent harness to the memory at
// target: it finds the paths harness.Install needs (this binary, the home,
// the project) and prints what changed.
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
	o := harness.InstallOptions{
		Harness: name, Scope: scope, Home: home, Project: project,
		Memory: mem, Mindmount: bin, MCP: harness.ServeMCP(mem), Env: os.Getenv,
		LookPath: exec.LookPath,
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
	if err := projectSkills(name, scope, home, project, mem, uninstall); err != nil { // cmd_harness_skills.go
		return err
	}
	if scope == "project" {
		if err := handOver(project, written(name, home, project, changes)); err != nil { // cmd_hooks.go
			return err
		}
	}
	if !uninstall {
		if err := wouldRun(bin); err != nil {
			fmt.Fprintf(stderr, "mindmount: warning: %s will not run what was installed: %v\n", name, err)
		}
	}
	if advice := harness.InstallAdvice(name); advice != "" && !uninstall {
		fmt.Fprintf(stdout, "mindmount: %s\n", advice)
	}
	return nil
}

// wouldRun says why the harness could not run the mindmount binary bin,
// which its hooks and MCP entry name, later: a build "go run" or "go test"
// made in a temporary folder is gone once that command ends, and a file
// that is not executable never starts. (A repository served by a running
// daemon is no obstacle: "mindmount mcp" attaches to that daemon.)
func wouldRun(bin string) error {
	if strings.Contains(bin, string(filepath.Separator)+"go-build") {
		return fmt.Errorf("%s is a temporary build (go run) that is deleted when it ends; install mindmount (go install ./cmd/mindmount) and run hooks install with the installed binary", bin)
	}
	fi, err := os.Stat(bin)
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() || fi.Mode().Perm()&0o111 == 0 {
		return fmt.Errorf("%s is not an executable file", bin)
	}
	return nil
}
