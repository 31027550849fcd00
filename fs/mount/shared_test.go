package mount

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mindmount/mindmount/fs/gitrepo"
	"github.com/mindmount/mindmount/fs/tracker"
	"github.com/mindmount/mindmount/memgraph"
	"github.com/mindmount/mindmount/memgraph/team"
)

// teamTracker starts the tracker of a team repository, committing for
// member; stopped (after a flush) in t.Cleanup, after the mount is gone.
func teamTracker(t *testing.T, dir, member string) (*tracker.Tracker, *tracker.Listeners) {
	t.Helper()
	g, err := memgraph.Scan(dir)
	if err != nil {
		t.Fatal(err)
	}
	r, err := gitrepo.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	ls := &tracker.Listeners{}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	tr := tracker.New(g, r, tracker.Config{Debounce: 50 * time.Millisecond, MaxWait: time.Second, Logger: log, Listener: ls.Listener(), User: member, Author: member})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- tr.Run(ctx) }()
	select {
	case <-tr.Ready():
	case err := <-done:
		cancel()
		t.Fatalf("team tracker: %v", err)
	}
	t.Cleanup(func() {
		fctx, fcancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer fcancel()
		if err := tr.Flush(fctx); err != nil {
			t.Errorf("team flush: %v", err)
		}
		cancel()
		<-done
	})
	return tr, ls
}

// mountWithTeams mounts a personal repository with the team eng (write)
// and ops (read) at shared/; the team "secret" exists, with a canary, but
// is not attached.
func mountWithTeams(t *testing.T) (tm *testMount, eng, ops string, engTr *tracker.Tracker) {
	requireFUSE(t)
	eng = newRepo(t, map[string]string{"user_memory/eng-fact.md": memoryFile("Eng Fact", "Deploys on Tuesdays", "The team deploys on Tuesdays.")})
	ops = newRepo(t, map[string]string{"user_memory/ops-fact.md": memoryFile("Ops Fact", "Pager rota", "The rota is weekly.")})
	newRepo(t, map[string]string{"user_memory/canary.md": memoryFile("Canary", "canary-7f3a9", "canary-7f3a9")})
	engTr, engLs := teamTracker(t, eng, "alice")
	opsTr, opsLs := teamTracker(t, ops, "alice")
	tm = mountRepo(t, newRepo(t, nil), Options{Teams: []Team{
		{Name: "eng", Role: team.Write, Tracker: engTr, Listeners: engLs},
		{Name: "ops", Role: team.Read, Tracker: opsTr, Listeners: opsLs},
	}})
	return tm, eng, ops, engTr
}

func TestSharedListsOnlyAttachedTeams(t *testing.T) {
	tm, _, _, _ := mountWithTeams(t)
	ents, err := os.ReadDir(tm.p("shared"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	if strings.Join(names, " ") != "eng ops" {
		t.Fatalf("shared/ lists %v, want eng ops", names)
	}
	if !strings.Contains(tm.read("shared/eng/user_memory/eng-fact.md"), "Tuesdays") {
		t.Fatal("the team's memory does not read through shared/eng")
	}
	if _, err := os.Stat(tm.p("shared/secret")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a team not joined: %v", err)
	}
	root, _ := os.ReadDir(tm.mnt)
	found := false
	for _, e := range root {
		found = found || e.Name() == "shared" && e.IsDir()
	}
	if !found {
		t.Fatal("the root does not list shared/")
	}
	if b, _ := inDir(tm.mnt, "grep", "-r", "canary-7f3a9", ".").CombinedOutput(); len(b) != 0 {
		t.Fatalf("a canary of a team not joined is visible: %s", b)
	}
}

// TestReadRoleIsReadOnly: every mutating call on a team the member only
// reads is EROFS, and the team's HEAD does not move.
func TestReadRoleIsReadOnly(t *testing.T) {
	tm, _, ops, _ := mountWithTeams(t)
	head := git(t, ops, "rev-parse", "HEAD")
	f := tm.p("shared/ops/user_memory/ops-fact.md")
	for name, do := range map[string]func() error{
		"write":    func() error { return os.WriteFile(f, []byte("x"), 0o644) },
		"append":   func() error { return appendLine(f, "more") },
		"create":   func() error { return os.WriteFile(tm.p("shared/ops/user_memory/new.md"), []byte("x"), 0o644) },
		"mkdir":    func() error { return os.Mkdir(tm.p("shared/ops/user_memory/sub"), 0o755) },
		"rename":   func() error { return os.Rename(f, tm.p("shared/ops/user_memory/moved.md")) },
		"unlink":   func() error { return os.Remove(f) },
		"truncate": func() error { return os.Truncate(f, 0) },
		"chmod":    func() error { return os.Chmod(f, 0o600) },
		"setxattr": func() error { return syscall.Setxattr(f, "user.x", []byte("1"), 0) },
	} {
		err := do()
		if err == nil {
			t.Errorf("%s on a read-only team succeeded", name)
			continue
		}
		if name != "setxattr" && !errors.Is(err, syscall.EROFS) {
			t.Errorf("%s: %v, want EROFS", name, err)
		}
	}
	if !strings.Contains(tm.read("shared/ops/user_memory/ops-fact.md"), "weekly") {
		t.Fatal("the memory changed")
	}
	if got := git(t, ops, "rev-parse", "HEAD"); got != head {
		t.Fatalf("HEAD moved: %s -> %s", head, got)
	}
	if st := git(t, ops, "status", "--porcelain"); st != "" {
		t.Fatalf("the team's tree changed:\n%s", st)
	}
}

// TestWriteRoleCommitsAsMember: a write to a team the member may write is
// committed in the team's repository, the member its author, with the
// Mindmount-User trailer; the personal repository gets nothing, and a
// move between the two is EXDEV.
func TestWriteRoleCommitsAsMember(t *testing.T) {
	tm, eng, _, engTr := mountWithTeams(t)
	personal := tm.git("rev-parse", "HEAD")
	tm.write("shared/eng/user_memory/release.md", memoryFile("Release", "Release freeze on Fridays", "No releases on Fridays."))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := engTr.Settle(ctx); err != nil {
		t.Fatal(err)
	}
	log := git(t, eng, "log", "-1", "--format=%an <%ae>%n%B", "--", "user_memory/release.md")
	if !strings.HasPrefix(log, "alice (") || !strings.Contains(log, "<alice@") || !strings.Contains(log, "Mindmount-User: alice") {
		t.Fatalf("team commit:\n%s", log)
	}
	tm.settle()
	if got := tm.git("rev-parse", "HEAD"); got != personal {
		t.Fatalf("the personal repository moved: %s", tm.git("log", "-1", "--stat"))
	}
	tm.clean()
	if err := os.Rename(tm.p("user_memory/likes-tea.md"), tm.p("shared/eng/user_memory/likes-tea.md")); !errors.Is(err, syscall.EXDEV) {
		t.Fatalf("rename from personal into a team: %v, want EXDEV", err)
	}
}

// TestConcurrentTeamAppends: 8 writers appending to one team memory at
// once through the mount: every line is there, committed, git fsck clean.
func TestConcurrentTeamAppends(t *testing.T) {
	tm, eng, _, engTr := mountWithTeams(t)
	const writers, each = 8, 25
	f := tm.p("shared/eng/user_memory/eng-fact.md")
	var wg sync.WaitGroup
	errs := make(chan error, writers*each)
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < each; i++ {
				if err := appendLine(f, fmt.Sprintf("line w%d-%d", w, i)); err != nil {
					errs <- err
				}
			}
		}(w)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := engTr.Settle(ctx); err != nil {
		t.Fatal(err)
	}
	all := func(committed string) bool {
		committed += "\n" // git() trims the last newline
		for w := 0; w < writers; w++ {
			for i := 0; i < each; i++ {
				if !strings.Contains(committed, fmt.Sprintf("line w%d-%d\n", w, i)) {
					return false
				}
			}
		}
		return true
	}
	deadline := time.Now().Add(60 * time.Second)
	committed := git(t, eng, "show", "HEAD:user_memory/eng-fact.md")
	for !all(committed) && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
		committed = git(t, eng, "show", "HEAD:user_memory/eng-fact.md")
	}
	committed += "\n"
	for w := 0; w < writers; w++ {
		for i := 0; i < each; i++ {
			if !strings.Contains(committed, fmt.Sprintf("line w%d-%d\n", w, i)) {
				disk, _ := os.ReadFile(eng + "/user_memory/eng-fact.md")
				t.Fatalf("line w%d-%d lost; on disk: %v", w, i, strings.Contains(string(disk), fmt.Sprintf("line w%d-%d\n", w, i)))
			}
		}
	}
	git(t, eng, "fsck", "--no-progress")
	if st := git(t, eng, "status", "--porcelain"); st != "" {
		t.Fatalf("uncommitted: %s", st)
	}
}
