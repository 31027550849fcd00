package mount

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

	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/mindmount/mindmount/fs/gitrepo"
	"github.com/mindmount/mindmount/fs/tracker"
	"github.com/mindmount/mindmount/memgraph"
)

// testMount is one in-process mount of a fresh repository.
type testMount struct {
	t   *testing.T
	dir string // backing working tree
	mnt string // mountpoint
	g   *memgraph.Graph
	r   *gitrepo.Repo
	tr  *tracker.Tracker
	srv *fuse.Server
	ms  *mountState

	consolidations chan struct{}
}

// memoryFile renders a valid memory in the seed format.
func memoryFile(title, desc, fact string) string {
	return fmt.Sprintf("---\ndescription: %s\n---\n# %s\n\n## Fact\n%s\n", desc, title, fact)
}

// requireFUSE skips the test when this machine cannot mount.
func requireFUSE(t testing.TB) {
	t.Helper()
	if _, err := os.Stat("/dev/fuse"); err != nil {
		t.Skip("no /dev/fuse")
	}
	if os.Geteuid() != 0 {
		if _, err := exec.LookPath("fusermount3"); err != nil {
			t.Skip("not root and no fusermount3")
		}
	}
}

// inDir returns a command that runs in dir. The child changes directory
// after exec, never before: a fork child whose chdir waits on a FUSE mount
// served by this very process can deadlock the Go runtime (the forking
// thread keeps its P while the child is blocked, so a stop-the-world never
// completes and the server goroutines never run).
func inDir(dir, name string, args ...string) *exec.Cmd {
	return exec.Command("sh", append([]string{"-c", `cd "$0" && exec "$@"`, dir, name}, args...)...)
}

// git runs the git CLI in dir and returns its trimmed output.
func git(t testing.TB, dir string, args ...string) string {
	t.Helper()
	cmd := inDir(dir, "git", args...)
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=test", "GIT_AUTHOR_EMAIL=t@e.st",
		"GIT_COMMITTER_NAME=test", "GIT_COMMITTER_EMAIL=t@e.st", "GIT_CONFIG_NOSYSTEM=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// newRepo creates a small mindmount repository with one commit.
func newRepo(t testing.TB, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	git(t, dir, "init", "-q", "-b", "main")
	base := map[string]string{
		"character.md":              "---\ndescription: The assistant's persona\nread_only: true\n---\n# Character\n\nYou are a careful assistant.\n",
		"user.md":                   "---\ndescription: Who the user is\n---\n# User\n\nThe user is Ada.\n",
		"user_memory/likes-tea.md":  memoryFile("Likes Tea", "Drinks green tea every morning", "You drink green tea every morning."),
		"character_memory/brief.md": memoryFile("Brief", "Answer briefly", "Keep answers short."),
		".gitignore":                ".mindmount/cache/\n",
	}
	for k, v := range files {
		base[k] = v
	}
	for rel, data := range base {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	git(t, dir, "add", "-A")
	git(t, dir, "commit", "-qm", "seed")
	return dir
}

// mountRepo mounts dir in a fresh mountpoint and starts the tracker; all is
// undone in t.Cleanup.
func mountRepo(t *testing.T, dir string, opt Options) *testMount {
	t.Helper()
	return mountRepoDebounce(t, dir, opt, 50*time.Millisecond)
}

func mountRepoDebounce(t *testing.T, dir string, opt Options, debounce time.Duration) *testMount {
	t.Helper()
	requireFUSE(t)
	g, err := memgraph.Scan(dir)
	if err != nil {
		t.Fatal(err)
	}
	r, err := gitrepo.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	if testing.Verbose() {
		log = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	var ls tracker.Listeners
	tr := tracker.New(g, r, tracker.Config{Debounce: debounce, MaxWait: 10 * debounce, Logger: log, Listener: ls.Listener()})
	ctx, cancel := context.WithCancel(context.Background())
	if err := tr.Recover(ctx); err != nil {
		cancel()
		t.Fatal(err)
	}
	tm := &testMount{t: t, dir: dir, mnt: t.TempDir(), g: g, r: r, tr: tr, consolidations: make(chan struct{}, 10)}
	if opt.Logger == nil {
		opt.Logger = log
	}
	if opt.OnConsolidate == nil {
		opt.OnConsolidate = func() { tm.consolidations <- struct{}{} }
	}
	srv, ms, err := mount(tm.mnt, deps{graph: g, tracker: tr, listen: ls.Add, search: searchFunc(g)}, opt)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	tm.srv, tm.ms = srv, ms
	done := make(chan error, 1)
	go func() { done <- tr.Run(ctx) }()
	select {
	case <-tr.Ready():
	case err := <-done:
		t.Fatalf("tracker.Run: %v", err)
	}
	t.Cleanup(func() {
		fctx, fcancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer fcancel()
		if err := tr.Flush(fctx); err != nil {
			t.Errorf("flush: %v", err)
		}
		cancel()
		<-done
		if err := Unmount(srv, tm.mnt); err != nil {
			t.Errorf("unmount: %v", err)
		}
		srv.Wait()
	})
	return tm
}

// p returns the mount path of a repo path.
func (tm *testMount) p(rel string) string { return filepath.Join(tm.mnt, filepath.FromSlash(rel)) }

// b returns the backing path of a repo path.
func (tm *testMount) b(rel string) string { return filepath.Join(tm.dir, filepath.FromSlash(rel)) }

func (tm *testMount) read(rel string) string {
	tm.t.Helper()
	b, err := os.ReadFile(tm.p(rel))
	if err != nil {
		tm.t.Fatal(err)
	}
	return string(b)
}

func (tm *testMount) write(rel, data string) {
	tm.t.Helper()
	if err := os.MkdirAll(filepath.Dir(tm.p(rel)), 0o755); err != nil {
		tm.t.Fatal(err)
	}
	if err := os.WriteFile(tm.p(rel), []byte(data), 0o644); err != nil {
		tm.t.Fatal(err)
	}
}

// settle waits until every change so far is committed or reported.
func (tm *testMount) settle() {
	tm.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := tm.tr.Settle(ctx); err != nil {
		tm.t.Fatalf("settle: %v", err)
	}
}

func (tm *testMount) git(args ...string) string {
	tm.t.Helper()
	return git(tm.t, tm.dir, args...)
}

// commits returns the number of commits on HEAD.
func (tm *testMount) commits() int {
	tm.t.Helper()
	var n int
	fmt.Sscan(tm.git("rev-list", "--count", "HEAD"), &n)
	return n
}

// clean asserts the backing repository is consistent: git fsck passes and
// git status shows nothing but what want lists (porcelain lines).
func (tm *testMount) clean(want ...string) {
	tm.t.Helper()
	tm.git("fsck", "--no-progress")
	got := tm.git("status", "--porcelain")
	var lines []string
	if got != "" {
		lines = strings.Split(got, "\n")
	}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		tm.t.Errorf("git status --porcelain:\n%s\nwant:\n%s", got, strings.Join(want, "\n"))
	}
}

// eventually polls cond until it holds or a deadline passes.
func eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
