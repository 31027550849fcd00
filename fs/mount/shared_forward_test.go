package mount

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/mindmount/mindmount/fs/gitrepo"
	"github.com/mindmount/mindmount/fs/tracker"
	"github.com/mindmount/mindmount/memgraph"
	"github.com/mindmount/mindmount/memgraph/team"
)

// fakeWriter is a team's writer for the mount's tests: it records what
// is forwarded and, unless refuse is set, writes it into the team's tree.
type fakeWriter struct {
	dir    string
	mu     sync.Mutex
	calls  []string // "put rel base data" / "remove rel base"
	refuse error
}

func (w *fakeWriter) Put(_ context.Context, rel, base string, data []byte) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.calls = append(w.calls, fmt.Sprintf("put %s %s %q", rel, base, data))
	if w.refuse != nil {
		return w.refuse
	}
	return os.WriteFile(filepath.Join(w.dir, rel), data, 0o644)
}

func (w *fakeWriter) Remove(_ context.Context, rel, base string) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.calls = append(w.calls, fmt.Sprintf("remove %s %s", rel, base))
	if w.refuse != nil {
		return w.refuse
	}
	return os.Remove(filepath.Join(w.dir, rel))
}

func (w *fakeWriter) take() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	c := w.calls
	w.calls = nil
	return c
}

// forwardMount mounts a personal repository with the team eng (role)
// forwarded to a fakeWriter.
func forwardMount(t *testing.T, role team.Role) (*testMount, string, *fakeWriter, string) {
	t.Helper()
	requireFUSE(t)
	eng := newRepo(t, map[string]string{"user_memory/eng-fact.md": memoryFile("Eng Fact", "Deploys on Tuesdays", "The team deploys on Tuesdays.")})
	g, err := memgraph.Scan(eng)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(g.Close)
	stage := t.TempDir()
	os.Chmod(stage, 0o700)
	w := &fakeWriter{dir: eng}
	tm := mountRepo(t, newRepo(t, nil), Options{Teams: []Team{{Name: "eng", Role: role, Graph: g, Forward: w, StageDir: stage}}})
	return tm, eng, w, stage
}

// TestForwardedChanges: a writer's append, overwrite (>), truncation and removal
// under shared/eng are each forwarded once, whole, with the blob id of
// the version they started from; nothing is written to the team's tree
// by the mount, and nothing stays staged.
func TestForwardedChanges(t *testing.T) {
	tm, eng, w, stage := forwardMount(t, team.Write)
	rel := "user_memory/eng-fact.md"
	old, _ := os.ReadFile(filepath.Join(eng, rel))
	if out, err := inDir(tm.mnt, "bash", "-c", "echo more >> shared/eng/"+rel).CombinedOutput(); err != nil {
		t.Fatalf("append: %v %s", err, out)
	}
	want := fmt.Sprintf("put %s %s %q", rel, gitrepo.BlobID(old), string(old)+"more\n")
	if c := w.take(); len(c) != 1 || c[0] != want {
		t.Fatalf("append forwarded %q, want %q", c, want)
	}
	if got := tm.read("shared/eng/" + rel); !strings.HasSuffix(got, "more\n") {
		t.Fatalf("the mount reads %q after the append", got)
	}
	cur, _ := os.ReadFile(filepath.Join(eng, rel))
	if out, err := inDir(tm.mnt, "bash", "-c", "echo new > shared/eng/"+rel).CombinedOutput(); err != nil {
		t.Fatalf("overwrite: %v %s", err, out)
	}
	want = fmt.Sprintf("put %s %s %q", rel, gitrepo.BlobID(cur), "new\n")
	if c := w.take(); len(c) != 1 || c[0] != want {
		t.Fatalf("overwrite forwarded %q, want %q", c, want)
	}
	// A truncation no write follows is forwarded by itself.
	if err := os.Truncate(tm.p("shared/eng/"+rel), 0); err != nil {
		t.Fatal(err)
	}
	var got []string
	eventually(t, "the truncation forwarded", func() bool { got = append(got, w.take()...); return len(got) > 0 })
	if want := fmt.Sprintf("put %s %s %q", rel, gitrepo.BlobID([]byte("new\n")), ""); len(got) != 1 || got[0] != want {
		t.Fatalf("truncate forwarded %q, want %q", got, want)
	}
	os.WriteFile(filepath.Join(eng, rel), []byte("new\n"), 0o644) // as it was
	if err := os.Remove(tm.p("shared/eng/" + rel)); err != nil {
		t.Fatal(err)
	}
	if c := w.take(); len(c) != 1 || c[0] != "remove "+rel+" "+gitrepo.BlobID([]byte("new\n")) {
		t.Fatalf("unlink forwarded %q", c)
	}
	if es, _ := os.ReadDir(stage); len(es) != 0 {
		t.Fatalf("the staging folder keeps %d files", len(es))
	}
}

// TestForwardRefusals: the writer's refusal is the close's errno (its
// read-only EROFS, an invalid memory EPERM); a reader's change never
// reaches the writer (EROFS in the mount).
func TestForwardRefusals(t *testing.T) {
	tm, _, w, _ := forwardMount(t, team.Write)
	f := tm.p("shared/eng/user_memory/eng-fact.md")
	for _, c := range []struct {
		refuse error
		want   syscall.Errno
	}{
		{team.ErrReadOnly, syscall.EROFS},
		{fmt.Errorf("not committed: %w", tracker.ErrInvalid), syscall.EPERM},
		{fmt.Errorf("%w: full", tracker.ErrTreeFull), syscall.ENOSPC},
	} {
		w.mu.Lock()
		w.refuse = c.refuse
		w.mu.Unlock()
		fd, err := os.OpenFile(f, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			t.Fatal(err)
		}
		fd.WriteString("x\n")
		if err := fd.Close(); !errors.Is(err, c.want) {
			t.Errorf("close with the writer refusing %v: %v, want %v", c.refuse, err, c.want)
		}
	}
	rd, _, rw, _ := forwardMount(t, team.Read)
	if err := appendLine(rd.p("shared/eng/user_memory/eng-fact.md"), "x"); !errors.Is(err, syscall.EROFS) {
		t.Fatalf("a reader's append: %v, want EROFS", err)
	}
	if c := rw.take(); len(c) != 0 {
		t.Fatalf("a reader's change was forwarded: %q", c)
	}
}

// TestForwardedNewFile: a new file under shared/eng (a shell's >) is
// forwarded once with no base, then read from the team's tree; one that
// only gets made (touch) is forwarded empty by itself.
func TestForwardedNewFile(t *testing.T) {
	tm, _, w, _ := forwardMount(t, team.Write)
	rel := "user_memory/new.md"
	if out, err := inDir(tm.mnt, "bash", "-c", "echo fresh > shared/eng/"+rel).CombinedOutput(); err != nil {
		t.Fatalf("create: %v %s", err, out)
	}
	if c, want := w.take(), fmt.Sprintf("put %s  %q", rel, "fresh\n"); len(c) != 1 || c[0] != want {
		t.Fatalf("create forwarded %q, want %q", c, want)
	}
	if got := tm.read("shared/eng/" + rel); got != "fresh\n" {
		t.Fatalf("the new file reads %q", got)
	}
	if out, err := inDir(tm.mnt, "touch", "shared/eng/user_memory/empty.md").CombinedOutput(); err != nil {
		t.Fatalf("touch: %v %s", err, out)
	}
	var got []string
	eventually(t, "the empty file forwarded", func() bool { got = append(got, w.take()...); return len(got) > 0 })
	if want := fmt.Sprintf("put user_memory/empty.md  %q", ""); len(got) != 1 || got[0] != want {
		t.Fatalf("touch forwarded %q, want %q", got, want)
	}
}

// TestForwardedSedInPlace: sed -i under shared/eng (a temporary written,
// closed, then renamed over the memory) is forwarded once, as the
// memory's new content from the version it had; the temporary itself
// never reaches the team's writer. A plain mv of a team file is EXDEV
// to the mount, so mv copies and removes, each forwarded.
func TestForwardedSedInPlace(t *testing.T) {
	tm, eng, w, _ := forwardMount(t, team.Write)
	rel := "user_memory/eng-fact.md"
	old, _ := os.ReadFile(filepath.Join(eng, rel))
	if out, err := inDir(tm.mnt, "sed", "-i", "s/Tuesdays/Thursdays/g", "shared/eng/"+rel).CombinedOutput(); err != nil {
		t.Fatalf("sed -i: %v %s", err, out)
	}
	want := fmt.Sprintf("put %s %s %q", rel, gitrepo.BlobID(old), strings.ReplaceAll(string(old), "Tuesdays", "Thursdays"))
	if c := w.take(); len(c) != 1 || c[0] != want {
		t.Fatalf("sed -i forwarded %q, want %q", c, want)
	}
	if got := tm.read("shared/eng/" + rel); !strings.Contains(got, "Thursdays") {
		t.Fatalf("the mount reads %q after sed -i", got)
	}
	cur, _ := os.ReadFile(filepath.Join(eng, rel))
	if out, err := inDir(tm.mnt, "mv", "shared/eng/"+rel, "shared/eng/user_memory/moved.md").CombinedOutput(); err != nil {
		t.Fatalf("mv: %v %s", err, out)
	}
	c := w.take()
	wantPut := fmt.Sprintf("put user_memory/moved.md  %q", cur)
	wantRm := "remove " + rel + " " + gitrepo.BlobID(cur)
	if len(c) < 2 || c[0] != wantPut || c[len(c)-1] != wantRm {
		t.Fatalf("mv forwarded %q, want %q then %q", c, wantPut, wantRm)
	}
}
