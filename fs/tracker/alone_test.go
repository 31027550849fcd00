package tracker_test

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/mindmount/mindmount/fs/gitrepo"
	"github.com/mindmount/mindmount/fs/tracker"
	"github.com/mindmount/mindmount/fs/tracker/conformance"
)

// aloneNote is a one-memory change for Alone.
func aloneNote(n int) tracker.Change {
	rel := fmt.Sprintf("user_memory/alone-%d.md", n)
	return tracker.Change{Message: "alone " + rel, Author: gitrepo.Writer("test"), Worktree: true,
		Changes: []gitrepo.Change{{Path: rel, Data: []byte(conformance.Memory("Alone", "Alone", "Written alone."))}}}
}

// TestAloneRefusedBesideATracker: a lone writer never commits while a
// tracker serves the repository, whether the tracker runs in this process
// (its own *Repo or the tracker's) or in another (the daemon lock's
// flock): Apply is refused with ErrDaemonRunning, HEAD stays, and once the
// tracker lets go the same change commits.
func TestAloneRefusedBesideATracker(t *testing.T) {
	dir := conformance.NewRepo(t)
	tr, _, r := open(t, dir, tracker.Config{})
	if err := tr.Claim(); err != nil {
		t.Fatal(err)
	}
	other, err := gitrepo.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	head, _ := r.Head()
	for _, repo := range []*gitrepo.Repo{r, other} {
		if h, err := (tracker.Alone{Repo: repo}).Apply(context.Background(), aloneNote(1)); !errors.Is(err, tracker.ErrDaemonRunning) {
			t.Fatalf("Alone beside a tracker in this process: %q, %v; want ErrDaemonRunning", h, err)
		}
	}
	if now, _ := r.Head(); now != head {
		t.Fatalf("HEAD moved from %s to %s beside the tracker", head, now)
	}
	// A command that holds the lock for its run (import, add) is not a
	// tracker: a lone writer of its own commits under it.
	tr.Close()
	unlock, err := other.LockDaemon()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := (tracker.Alone{Repo: other}).Apply(context.Background(), aloneNote(2)); err != nil {
		t.Fatalf("Alone under its command's daemon lock: %v", err)
	}
	if err := tr.Claim(); err != nil {
		t.Fatalf("a tracker beside a command holding the lock (one process): %v", err)
	}
	if _, err := (tracker.Alone{Repo: other}).Apply(context.Background(), aloneNote(3)); !errors.Is(err, tracker.ErrDaemonRunning) {
		t.Fatalf("Alone beside a tracker and a command: %v; want ErrDaemonRunning", err)
	}
	tr.Close()
	unlock()

	// Another process holds the daemon lock, as a daemon does (-o: flock
	// holds it itself, so it is free once flock is reaped).
	lock := filepath.Join(dir, ".git", "mindmount-daemon.lock")
	holder := exec.Command("flock", "-n", "-o", lock, "sh", "-c", "echo held; exec sleep 600")
	holder.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out, err := holder.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := holder.Start(); err != nil {
		t.Skipf("flock(1): %v", err)
	}
	stopped := false
	stop := func() {
		if !stopped {
			stopped = true
			syscall.Kill(-holder.Process.Pid, syscall.SIGKILL)
			holder.Wait()
		}
	}
	t.Cleanup(stop)
	if _, err := out.Read(make([]byte, 5)); err != nil {
		t.Fatalf("flock(1) did not take the lock: %v", err)
	}
	head, _ = r.Head()
	if h, err := (tracker.Alone{Repo: other}).Apply(context.Background(), aloneNote(4)); !errors.Is(err, tracker.ErrDaemonRunning) {
		t.Fatalf("Alone beside a daemon in another process: %q, %v; want ErrDaemonRunning", h, err)
	}
	if now, _ := r.Head(); now != head {
		t.Fatalf("HEAD moved from %s to %s beside the daemon", head, now)
	}
	stop()
	if h, err := (tracker.Alone{Repo: other}).Apply(context.Background(), aloneNote(4)); err != nil || h == "" {
		t.Fatalf("Alone once the daemon is gone: %q, %v", h, err)
	}
	conformance.CheckRepo(t, dir)
}

// TestAloneAndTrackerTakeTurns (-race): lone writers and a tracker that
// claims the repository, commits and lets go over and over, all in one
// process.
// Each side gets its turns (ten lone commits a writer, ten claims).
// Every lone commit either lands or is refused with ErrDaemonRunning, a
// claim is refused only with ErrDaemonRunning (a lone commit under way),
// and no lone commit lands while the tracker held the repository from
// before it began until after it ended.
func TestAloneAndTrackerTakeTurns(t *testing.T) {
	dir := conformance.NewRepo(t)
	tr, _, r := open(t, dir, tracker.Config{})
	var served atomic.Int64 // odd while the tracker holds the repository
	var wg sync.WaitGroup
	var landed, claims atomic.Int64
	errs := make(chan error, 100)
	for w := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			mine := 0
			for i := 0; mine < 10 && i < 2000; i++ {
				before := served.Load()
				h, err := (tracker.Alone{Repo: r}).Apply(context.Background(), aloneNote(w*10000+i))
				after := served.Load()
				switch {
				case errors.Is(err, tracker.ErrDaemonRunning):
				case err != nil:
					errs <- err
				case before == after && before%2 == 1:
					errs <- fmt.Errorf("lone commit %s landed while the tracker served the repository", h)
				default:
					landed.Add(1)
					mine++
				}
				time.Sleep(20 * time.Millisecond) // room for the tracker's claim
			}
		}()
	}
	lone := make(chan struct{})
	go func() { wg.Wait(); close(lone) }()
	var twg sync.WaitGroup
	twg.Add(1)
	go func() {
		defer twg.Done()
		for k := 0; claims.Load() < 10; k++ {
			select {
			case <-lone:
				return
			default:
			}
			err := tr.Claim()
			if errors.Is(err, tracker.ErrDaemonRunning) {
				time.Sleep(time.Millisecond)
				continue
			}
			if err != nil {
				errs <- err
				return
			}
			served.Add(1)
			claims.Add(1)
			if _, err := tr.Apply(context.Background(), aloneNote(1000+k)); err != nil {
				errs <- fmt.Errorf("the tracker's own commit: %w", err)
			}
			served.Add(1)
			tr.Close()
		}
	}()
	twg.Wait()
	<-lone
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	t.Logf("%d lone commits landed, the others were refused; the tracker held the repository %d times", landed.Load(), claims.Load())
	if n := commitCount(t, dir); n < int(landed.Load()) {
		t.Fatalf("%d commits for %d lone commits that landed", n, landed.Load())
	}
	conformance.CheckRepo(t, dir)
}
