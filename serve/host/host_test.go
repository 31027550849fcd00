package host

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mindmount/mindmount/fs/gitrepo"
	"github.com/mindmount/mindmount/template"
)

// newUser makes ROOT/users/<id> a mindmount repository (the template,
// uncommitted: the first load commits it) and registers it for our uid.
func newUser(t *testing.T, root, id string) string {
	t.Helper()
	dir := UserDir(root, id)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := gitrepo.Init(dir); err != nil {
		t.Fatal(err)
	}
	if _, err := template.Write(dir, id, false); err != nil {
		t.Fatal(err)
	}
	if err := AddUser(root, Entry{ID: id, UID: testUID(root, id), GID: testUID(root, id)}); err != nil {
		t.Fatal(err)
	}
	return dir
}

// testUID is a uid of id's own (the registry refuses root's and shared
// ones): our own when we are not root (a non-root daemon serves everyone
// as itself, so only one user), else one no account has.
func testUID(root, id string) uint32 {
	if os.Getuid() != 0 {
		return uint32(os.Getuid())
	}
	users, _ := ReadRegistry(root)
	for _, u := range users {
		if u.ID == id {
			return u.UID
		}
	}
	return 3100 + uint32(len(users))
}

func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := exec.Command("git", append([]string{"-c", "safe.directory=*", "-C", dir}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

func newHost(t *testing.T, root string, unloadAfter time.Duration) *Host {
	t.Helper()
	h, err := New(Config{Root: root, UnloadAfter: unloadAfter, Runtime: RuntimeConfig{Debounce: time.Hour, MaxWait: time.Hour}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close(context.Background()) })
	return h
}

// events returns a channel of the host's events.
func events(h *Host) <-chan Event {
	ch := make(chan Event, 64)
	h.Subscribe(func(ev Event) {
		select {
		case ch <- ev:
		default:
		}
	})
	return ch
}

func waitEvent(t *testing.T, ch <-chan Event, id string, kind EventKind) {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		select {
		case ev := <-ch:
			if ev.ID == id && ev.Kind == kind {
				return
			}
		case <-deadline:
			t.Fatalf("no event %v for %s", kind, id)
		}
	}
}

// A user loads on first Acquire and, idle past UnloadAfter, unloads,
// committing what was pending (the debounce is an hour: only the unload
// can have committed it), with the user named in the commit.
func TestHostLazyLoadUnloadCommitsPending(t *testing.T) {
	root := t.TempDir()
	dir := newUser(t, root, "alice")
	newUser(t, root, "bob")
	h := newHost(t, root, 50*time.Millisecond)
	evs := events(h)
	if u, _ := h.Lookup("alice"); u.Loaded {
		t.Fatal("alice loaded before any access")
	}
	rt, release, err := h.Acquire(context.Background(), "alice")
	if err != nil {
		t.Fatal(err)
	}
	if u, _ := h.Lookup("alice"); !u.Loaded {
		t.Fatal("alice not loaded after Acquire")
	}
	if u, _ := h.Lookup("bob"); u.Loaded {
		t.Fatal("bob loaded by alice's access")
	}
	rel := "user_memory/likes-tea.md"
	if err := os.WriteFile(filepath.Join(dir, rel), []byte("---\ndescription: Likes tea\n---\n# Likes tea\n\n## Fact\nYou like tea.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	rt.Tracker.Touch(rel, "sh")
	release()

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go h.Run(ctx)
	waitEvent(t, evs, "alice", Unloaded)
	if u, _ := h.Lookup("alice"); u.Loaded {
		t.Fatal("alice still loaded after the unload event")
	}
	log := git(t, dir, "log", "-1", "--format=%an%n%B")
	if !strings.Contains(log, "likes-tea.md") || !strings.Contains(log, "Mindmount-User: alice") {
		t.Fatalf("pending change not committed on unload:\n%s", log)
	}
	// Loads again at the next access, the daemon lock given back.
	if _, release, err := h.Acquire(context.Background(), "alice"); err != nil {
		t.Fatalf("reload: %v", err)
	} else {
		release()
	}
}

// A user in use is never unloaded.
func TestHostKeepsAcquiredUser(t *testing.T) {
	root := t.TempDir()
	newUser(t, root, "alice")
	h := newHost(t, root, time.Millisecond)
	_, release, err := h.Acquire(context.Background(), "alice")
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	time.Sleep(5 * time.Millisecond)
	h.unloadIdle(context.Background())
	if u, _ := h.Lookup("alice"); !u.Loaded {
		t.Fatal("unloaded while acquired")
	}
}

func TestHostRootLock(t *testing.T) {
	root := t.TempDir()
	newHost(t, root, time.Minute)
	_, err := New(Config{Root: root})
	if !errors.Is(err, ErrRootBusy) || !strings.Contains(err.Error(), "pid") {
		t.Fatalf("second host on one root: %v, want ErrRootBusy with the pid", err)
	}
	if running, pid, _ := Running(root); !running || pid == "" {
		t.Fatalf("Running = %v %q", running, pid)
	}
}

func TestHostUnknownAndBadIDs(t *testing.T) {
	root := t.TempDir()
	newUser(t, root, "alice")
	h := newHost(t, root, time.Minute)
	if _, _, err := h.Acquire(context.Background(), "carol"); !errors.Is(err, ErrUnknownUser) {
		t.Fatalf("unknown user: %v", err)
	}
	for _, id := range []string{"..", "Alice", "a/b", ""} {
		if _, _, err := h.Acquire(context.Background(), id); !errors.Is(err, ErrBadID) {
			t.Fatalf("Acquire(%q): %v, want ErrBadID", id, err)
		}
	}
	if err := AddUser(root, Entry{ID: "alice"}); err == nil {
		t.Fatal("adding alice twice succeeded")
	}
}

// Users added and removed beside a running host are picked up at their
// next access; removal moves the repository aside.
func TestHostAddRemoveWhileRunning(t *testing.T) {
	root := t.TempDir()
	newUser(t, root, "alice")
	h := newHost(t, root, time.Minute)
	if _, _, err := h.Acquire(context.Background(), "bob"); !errors.Is(err, ErrUnknownUser) {
		t.Fatalf("bob before add: %v", err)
	}
	newUser(t, root, "bob")
	_, release, err := h.Acquire(context.Background(), "bob")
	if err != nil {
		t.Fatalf("bob after add: %v", err)
	}
	release()
	if err := RemoveUser(root, "bob"); err != nil {
		t.Fatal(err)
	}
	if err := h.Reload(); err != nil {
		t.Fatal(err)
	}
	ents, _ := os.ReadDir(filepath.Join(root, RemovedDir))
	if len(ents) != 1 || !strings.HasPrefix(ents[0].Name(), "bob-") {
		t.Fatalf("repository not moved aside to removed/: %v", ents)
	}
	if _, _, err := h.Acquire(context.Background(), "bob"); !errors.Is(err, ErrUnknownUser) {
		t.Fatalf("bob after remove: %v", err)
	}
	if len(h.Users()) != 1 {
		t.Fatalf("users: %v", h.Users())
	}
}

// A broken repository fails its own user only.
func TestHostBrokenRepositoryIsolated(t *testing.T) {
	root := t.TempDir()
	newUser(t, root, "alice")
	dir := newUser(t, root, "bob")
	os.Remove(filepath.Join(dir, "user.md"))
	os.Remove(filepath.Join(dir, "character.md"))
	h := newHost(t, root, time.Minute)
	if _, _, err := h.Acquire(context.Background(), "bob"); !errors.Is(err, ErrNotMindmount) {
		t.Fatalf("broken bob: %v", err)
	}
	if _, release, err := h.Acquire(context.Background(), "alice"); err != nil {
		t.Fatalf("alice beside broken bob: %v", err)
	} else {
		release()
	}
	st := string(h.Status(""))
	if !strings.Contains(st, "bob") || !strings.Contains(st, "broken") || !strings.Contains(st, "loaded") {
		t.Fatalf("status:\n%s", st)
	}
}

// TestCheckNotServed is issue 22's sixth defect: mindmount mount of
// ROOT/users/bob succeeded while serve owned ROOT, as long as bob was not
// loaded, and two daemons then wrote one repository. Serve holds every
// registered user's repository from its start, loaded or not, and through
// any path that names it.
func TestCheckNotServed(t *testing.T) {
	root := t.TempDir()
	bob := newUser(t, root, "bob")
	if err := CheckNotServed(bob); err != nil {
		t.Fatalf("no daemon yet: %v", err)
	}
	h, err := New(Config{Root: root, Mount: "/mnt/memory"})
	if err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(t.TempDir(), "bob-link")
	os.Symlink(bob, link)
	for _, p := range []string{bob, link, bob + "/"} {
		err := CheckNotServed(p)
		if !errors.Is(err, ErrServed) {
			t.Fatalf("CheckNotServed(%s) while served, bob never loaded: %v", p, err)
		}
		if !strings.Contains(err.Error(), "/mnt/memory/bob") {
			t.Errorf("the error does not say where the memory is served: %v", err)
		}
	}
	h.Close(context.Background())
	if err := CheckNotServed(bob); err != nil {
		t.Fatalf("after the daemon stopped: %v", err)
	}
}

// TestHostOperatorConfig (issue 23, item 3): under serve the operator's
// switches come from ROOT/config only — a user's own .git/mindmount/config
// (the user owns the repository) switches nothing off.
func TestHostOperatorConfig(t *testing.T) {
	root := t.TempDir()
	dir := newUser(t, root, "alice")
	key := "AKIA" + "IOSFODNN7EXAMPLE"
	if err := os.MkdirAll(filepath.Join(dir, ".git", "mindmount"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".git", "mindmount", "config"), []byte("commit_secrets: true\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	h := newHost(t, root, time.Hour)
	rt, release, err := h.Acquire(context.Background(), "alice")
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	write := func(rel string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Join(dir, "notes"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, rel), []byte("# Keys\n\n"+key+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		rt.Tracker.Touch(rel, "sh")
		if err := rt.Tracker.Flush(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	write("notes/a.md")
	if files := git(t, dir, "ls-files"); strings.Contains(files, "notes/a.md") {
		t.Fatal("the user's own .git/mindmount/config switched the guard off under serve")
	}
	if err := os.WriteFile(filepath.Join(root, OperatorConfigFile), []byte("commit_secrets: true\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	write("notes/b.md")
	if files := git(t, dir, "ls-files"); !strings.Contains(files, "notes/b.md") {
		t.Fatal("ROOT/config is not honoured")
	}
}
