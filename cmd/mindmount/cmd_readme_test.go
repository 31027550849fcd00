package main

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// readmeBlock is one ```sh block of README.md or a page under docs/.
type readmeBlock struct {
	line int // where the block starts, for messages
	text string
}

// shBlocks returns a markdown page's ```sh blocks in order.
func shBlocks(t *testing.T, path string) []readmeBlock {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var (
		blocks []readmeBlock
		cur    *readmeBlock
		n      int
	)
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		n++
		l := sc.Text()
		switch {
		case cur == nil && strings.TrimSpace(l) == "```sh":
			cur = &readmeBlock{line: n}
		case cur != nil && strings.TrimSpace(l) == "```":
			blocks = append(blocks, *cur)
			cur = nil
		case cur != nil:
			cur.text += l + "\n"
		}
	}
	return blocks
}

// TestReadmeBlocks pastes every ```sh block of README.md, in order, into a
// fresh bash with a fresh HOME (no git identity, no ~/mnt), as a new user
// would, so the README cannot drift from what mindmount does; then every
// page under docs/, each in a HOME of its own, with the mindmount the
// README's Quick start installed on its PATH (the pages say they assume
// it). Blocks that need something this machine cannot have say so on their
// first line ("# needs Docker"); blocks that run the test suite itself are
// skipped.
func TestReadmeBlocks(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and mounts: not in -short")
	}
	if _, err := os.Stat("/dev/fuse"); err != nil {
		t.Skip("no /dev/fuse: the README's blocks mount")
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	blocks := shBlocks(t, filepath.Join(root, "README.md"))
	if len(blocks) < 3 {
		t.Fatalf("README.md has %d sh blocks; expected the two commands, the quick start and more", len(blocks))
	}
	home := t.TempDir()
	runPageBlocks(t, root, "README.md", home, freshEnv(t, home), blocks)
	installed := filepath.Join(home, "go", "bin")
	for _, page := range docsPages(t, root) {
		t.Run(page, func(t *testing.T) {
			h := t.TempDir()
			env := freshEnv(t, h)
			for i, e := range env {
				if p, ok := strings.CutPrefix(e, "PATH="); ok {
					env[i] = "PATH=" + p + ":" + installed
				}
			}
			runPageBlocks(t, root, page, h, env, shBlocks(t, filepath.Join(root, page)))
		})
	}
}

// runPageBlocks runs a page's blocks in order in one HOME.
func runPageBlocks(t *testing.T, root, page, home string, env []string, blocks []readmeBlock) {
	t.Helper()
	for _, b := range blocks {
		first := strings.TrimSpace(strings.SplitN(b.text, "\n", 2)[0])
		switch {
		case strings.Contains(b.text, "scripts/test.sh"):
			t.Logf("%s:%d: skipped: runs the test suite itself", page, b.line)
			continue
		case strings.HasPrefix(first, "# needs "):
			t.Logf("%s:%d: skipped: %s", page, b.line, strings.TrimPrefix(first, "# "))
			continue
		}
		runReadmeBlock(t, root, page, home, env, b)
	}
}

// freshEnv is the environment of a new user: this machine's PATH plus where
// "go install" puts binaries, a new HOME, no mindmount or git identity
// variables; the Go caches are shared so nothing is downloaded twice. The
// tests' own TMPDIR is kept, so what the blocks' daemons leave there (a
// consolidation lock file per repository) is removed with it (TestMain).
func freshEnv(t *testing.T, home string) []string {
	t.Helper()
	goenv := func(k string) string {
		out, err := exec.Command("go", "env", k).Output()
		if err != nil {
			t.Fatalf("go env %s: %v", k, err)
		}
		return strings.TrimSpace(string(out))
	}
	env := []string{
		"HOME=" + home,
		"PATH=" + os.Getenv("PATH") + ":" + filepath.Join(home, "go", "bin"),
		"GOCACHE=" + goenv("GOCACHE"),
		"GOMODCACHE=" + goenv("GOMODCACHE"),
		"GOFLAGS=" + goenv("GOFLAGS"),
		"GOPROXY=" + goenv("GOPROXY"),
		"TERM=dumb",
		"LANG=C.UTF-8",
		"TMPDIR=" + os.TempDir(),
	}
	return env
}

func runReadmeBlock(t *testing.T, root, page, home string, env []string, b readmeBlock) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-euo", "pipefail", "-c", b.text)
	cmd.Dir = root
	cmd.Env = env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	before := untracked(t, root)
	err := cmd.Run()
	// A block runs where a reader's shell stands after cloning: what it
	// makes there would litter the reader's checkout.
	for _, p := range untracked(t, root) {
		if !slices.Contains(before, p) {
			t.Errorf("%s:%d: the block left %s in the source tree; make it work in a folder of its own (cd \"$(mktemp -d)\")", page, b.line, p)
		}
	}
	// Whatever the block left running (a daemon it started with &) ends
	// with it, and so do its mounts.
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
	}
	detachMountsUnder(home)
	if err != nil {
		t.Fatalf("%s:%d: block failed: %v\n--- block\n%s--- output\n%s", page, b.line, err, b.text, out.String())
	}
	t.Logf("%s:%d: ok", page, b.line)
}

// detachMountsUnder lazily unmounts every mount below dir.
func detachMountsUnder(dir string) {
	data, err := os.ReadFile("/proc/self/mounts")
	if err != nil {
		return
	}
	for _, l := range strings.Split(string(data), "\n") {
		f := strings.Fields(l)
		if len(f) > 1 && strings.HasPrefix(f[1], dir) {
			_ = exec.Command("fusermount3", "-u", "-z", f[1]).Run()
		}
	}
}

// untracked lists the files git does not track or ignore under root.
func untracked(t *testing.T, root string) []string {
	t.Helper()
	out, err := exec.Command("git", "-C", root, "ls-files", "--others", "--exclude-standard").Output()
	if err != nil {
		t.Fatalf("git ls-files: %v", err)
	}
	return strings.Fields(string(out))
}
