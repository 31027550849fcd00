package mount

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/mindmount/mindmount/fs/gitrepo"
	"github.com/mindmount/mindmount/fs/tracker"
	"github.com/mindmount/mindmount/memgraph"
)

// An editor working on the backing files while mounted: the mount never
// keeps serving what the kernel cached before, and the edit is committed.
func TestOutsideEditSeenAndCommitted(t *testing.T) {
	tm := mountRepo(t, newRepo(t, nil), Options{})
	const rel = "user_memory/likes-tea.md"
	old := tm.read(rel) // cache pages, attributes and the entry
	if _, err := os.Stat(tm.p("user_memory/new.md")); !os.IsNotExist(err) {
		t.Fatal("new.md exists") // caches the negative entry
	}
	idx := tm.read("user_memory.md")

	edited := memoryFile("Likes Tea", "Drinks oolong tea now", "You switched to oolong, a longer text than before.")
	if err := os.WriteFile(tm.b(rel), []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(tm.b("user_memory/new.md"), []byte(memoryFile("New", "Created beside the mount", "New.")), 0o644); err != nil {
		t.Fatal(err)
	}
	tm.settle()
	eventually(t, "the edit through the mount", func() bool {
		b, err := os.ReadFile(tm.p(rel))
		return err == nil && string(b) == edited
	})
	if got := tm.read(rel); got == old {
		t.Fatal("stale content")
	}
	eventually(t, "the new file through the mount", func() bool {
		_, err := os.Stat(tm.p("user_memory/new.md"))
		return err == nil
	})
	eventually(t, "the index", func() bool {
		b, _ := os.ReadFile(tm.p("user_memory.md"))
		return string(b) != idx && strings.Contains(string(b), "oolong") && strings.Contains(string(b), "new")
	})
	if log := tm.git("log", "-1", "--name-only", "--format=%an"); !strings.Contains(log, rel) || !strings.Contains(log, "user_memory/new.md") {
		t.Errorf("outside edit not committed:\n%s", log)
	}

	// Removed beside the mount: gone from the mount.
	if err := os.Remove(tm.b("user_memory/new.md")); err != nil {
		t.Fatal(err)
	}
	tm.settle()
	eventually(t, "the removal through the mount", func() bool {
		_, err := os.Stat(tm.p("user_memory/new.md"))
		return os.IsNotExist(err)
	})
	tm.clean()
}

// git revert in the backing repository moves HEAD; the mount shows the
// reverted content and the indexes follow.
func TestMovedHeadReflected(t *testing.T) {
	tm := mountRepo(t, newRepo(t, nil), Options{})
	tm.write("user_memory/likes-coffee.md", memoryFile("Likes Coffee", "Enjoys coffee", "You enjoy coffee."))
	tm.settle()
	if !strings.Contains(tm.read("user_memory.md"), "likes-coffee") {
		t.Fatal("index lacks likes-coffee")
	}
	tm.read("user_memory/likes-coffee.md")
	tm.git("revert", "--no-edit", "HEAD")
	tm.settle()
	eventually(t, "the reverted file gone from the mount", func() bool {
		_, err := os.Stat(tm.p("user_memory/likes-coffee.md"))
		return os.IsNotExist(err)
	})
	eventually(t, "the index without it", func() bool {
		b, _ := os.ReadFile(tm.p("user_memory.md"))
		return !strings.Contains(string(b), "likes-coffee")
	})
	// And back: revert the revert, content returns.
	tm.git("revert", "--no-edit", "HEAD")
	tm.settle()
	eventually(t, "the file back in the mount", func() bool {
		b, err := os.ReadFile(tm.p("user_memory/likes-coffee.md"))
		return err == nil && strings.Contains(string(b), "You enjoy coffee.")
	})
	tm.clean()
}

// Changes left uncommitted while no daemon ran are committed on start.
func TestRecoveryOnStart(t *testing.T) {
	dir := newRepo(t, nil)
	if err := os.WriteFile(dir+"/user_memory/left.md", []byte(memoryFile("Left", "Left by a crash", "Left.")), 0o644); err != nil {
		t.Fatal(err)
	}
	tm := mountRepo(t, dir, Options{})
	if out := tm.git("ls-files", "user_memory/left.md"); out == "" {
		t.Errorf("leftover not committed on start")
	}
	if !strings.Contains(tm.read("user_memory.md"), "left") {
		t.Errorf("index lacks the recovered memory")
	}
	tm.clean()
}

func TestMountErrors(t *testing.T) {
	requireFUSE(t)
	dir := newRepo(t, nil)
	g, err := memgraph.Scan(dir)
	if err != nil {
		t.Fatal(err)
	}
	r, err := gitrepo.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	var ls tracker.Listeners
	tr := tracker.New(g, r, tracker.Config{Listener: ls.Listener()})

	notEmpty := t.TempDir()
	os.WriteFile(notEmpty+"/x", nil, 0o644)
	if _, err := Mount(notEmpty, tr, &ls, Options{}); err == nil || !strings.Contains(err.Error(), "not empty") {
		t.Errorf("non-empty mountpoint: %v", err)
	}
	if _, err := Mount(dir+"/user_memory", tr, &ls, Options{}); err == nil {
		t.Errorf("mountpoint inside the repository: no error")
	}
	mnt := t.TempDir()
	srv, err := Mount(mnt, tr, &ls, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { Unmount(srv, mnt); srv.Wait() }()
	if _, err := Mount(mnt, tr, &ls, Options{}); err == nil || !strings.Contains(err.Error(), "already mounted") {
		t.Errorf("busy mountpoint: %v", err)
	}
}

// TestOutsideEditSeenBeforeCommit: an edit beside the mount reaches readers
// of the mount as soon as fsnotify reports it, not a debounce later. The
// debounce here is an hour, so nothing is committed while the test looks.
func TestOutsideEditSeenBeforeCommit(t *testing.T) {
	tm := mountRepoDebounce(t, newRepo(t, nil), Options{}, time.Hour)
	const rel = "user_memory/likes-tea.md"
	before := tm.commits()
	old := tm.read(rel) // cache pages, attributes and the entry
	if _, err := os.Stat(tm.p("user_memory/beside.md")); !os.IsNotExist(err) {
		t.Fatal("beside.md exists") // caches the negative entry
	}
	edited := memoryFile("Likes Tea", "Drinks oolong tea now", "You switched to oolong.")
	if err := os.WriteFile(tm.b(rel), []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(tm.b("user_memory/beside.md"), []byte(memoryFile("Beside", "Written beside the mount", "Beside.")), 0o644); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the edit through the mount", func() bool {
		b, err := os.ReadFile(tm.p(rel))
		return err == nil && string(b) == edited
	})
	eventually(t, "the new file through the mount", func() bool {
		_, err := os.Stat(tm.p("user_memory/beside.md"))
		return err == nil
	})
	if tm.commits() != before {
		t.Fatalf("a commit happened; the test must see the edit before it")
	}
	if old == edited {
		t.Fatal("test edit equals the original")
	}
}
