package mount

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestOneCommitPerBurst(t *testing.T) {
	tm := mountRepo(t, newRepo(t, nil), Options{})
	before := tm.commits()
	for _, slug := range []string{"a", "b", "c"} {
		tm.write("user_memory/"+slug+".md", memoryFile(slug, "Memory "+slug, "Fact "+slug+"."))
	}
	tm.settle()
	if got := tm.commits(); got != before+1 {
		t.Errorf("commits: %d -> %d, want one commit for the burst", before, got)
	}
	msg := tm.git("log", "-1", "--format=%B")
	for _, slug := range []string{"a", "b", "c"} {
		if !strings.Contains(msg, "user_memory/"+slug+".md") {
			t.Errorf("commit message lacks %s:\n%s", slug, msg)
		}
	}
	tm.clean()
}

func TestInvalidFileKeptAndReported(t *testing.T) {
	tm := mountRepo(t, newRepo(t, nil), Options{})
	bad := "---\nmood: happy\n---\n# No description\n"
	tm.write("user_memory/bad.md", bad)
	tm.settle()
	if got, err := os.ReadFile(tm.b("user_memory/bad.md")); err != nil || string(got) != bad {
		t.Errorf("backing file = %q, %v; want it kept as written", got, err)
	}
	if out := tm.git("ls-files", "user_memory/bad.md"); out != "" {
		t.Errorf("invalid file was committed")
	}
	if st := tm.read(".mindmount/status"); !strings.Contains(st, "user_memory/bad.md") {
		t.Errorf(".mindmount/status does not report the invalid file:\n%s", st)
	}
	if idx := tm.read("user_memory.md"); strings.Contains(idx, "bad") {
		t.Errorf("index lists the invalid memory:\n%s", idx)
	}
	// A later write that fixes it is committed.
	tm.write("user_memory/bad.md", memoryFile("Fixed", "Now valid", "Fixed."))
	tm.settle()
	if out := tm.git("ls-files", "user_memory/bad.md"); out == "" {
		t.Errorf("fixed file was not committed")
	}
	if st := tm.read(".mindmount/status"); strings.Contains(st, "user_memory/bad.md:") {
		t.Errorf(".mindmount/status still reports the fixed file:\n%s", st)
	}
	tm.clean()
}

func TestTempFilesNeverCommitted(t *testing.T) {
	tm := mountRepo(t, newRepo(t, nil), Options{})
	temps := []string{"user_memory/.likes-tea.md.swp", "user_memory/4913", "user_memory/likes-tea.md~", "user_memory/sedAbC123", "user_memory/.#likes-tea.md", "notes.tmp"}
	for _, rel := range temps {
		tm.write(rel, "scratch\n")
	}
	tm.write("user_memory/real.md", memoryFile("Real", "A real memory", "Real."))
	tm.settle()
	files := tm.git("ls-files")
	for _, rel := range temps {
		if strings.Contains(files, rel) {
			t.Errorf("temp file %s was committed", rel)
		}
	}
	if !strings.Contains(files, "user_memory/real.md") {
		t.Errorf("real memory was not committed")
	}
	for _, rel := range temps {
		if err := os.Remove(tm.p(rel)); err != nil {
			t.Error(err)
		}
	}
	tm.settle()
	tm.clean()
}

// errnoOf extracts the errno of a failed file operation.
func errnoOf(err error) syscall.Errno {
	var e syscall.Errno
	if errors.As(err, &e) {
		return e
	}
	return 0
}

func wantErrno(t *testing.T, what string, err error, want ...syscall.Errno) {
	t.Helper()
	got := errnoOf(err)
	for _, w := range want {
		if got == w {
			return
		}
	}
	t.Errorf("%s: err = %v, want %v", what, err, want)
}

// writeThrough opens p with flags, writes a line and closes it, and
// returns the first error. Without OPEN (the default read path) an open
// for writing succeeds and the refusal comes at the write; with O_TRUNC it
// comes at the open, from the truncating SETATTR.
func writeThrough(p string, flags int) error {
	f, err := os.OpenFile(p, flags, 0)
	if err != nil {
		return err
	}
	_, err = f.WriteString("x\n")
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

func TestReadOnlyRefusals(t *testing.T) {
	for _, mode := range []struct {
		name string
		opt  Options
	}{{"no-open", Options{}}, {"open-each-file", Options{OpenEachFile: true}}} {
		t.Run(mode.name, func(t *testing.T) { testReadOnlyRefusals(t, mode.opt) })
	}
}

func testReadOnlyRefusals(t *testing.T, opt Options) {
	tm := mountRepo(t, newRepo(t, nil), opt)
	const ro = "character.md"
	orig, err := os.ReadFile(tm.b(ro))
	if err != nil {
		t.Fatal(err)
	}
	origInfo, _ := os.Stat(tm.b(ro))
	p := tm.p(ro)
	eperm := []syscall.Errno{syscall.EACCES, syscall.EPERM}

	if fi, err := os.Stat(p); err != nil || fi.Mode().Perm()&0o222 != 0 {
		t.Errorf("read_only memory reported as %v (%v), want no write bits", fi.Mode(), err)
	}
	wantErrno(t, "write", writeThrough(p, os.O_WRONLY), eperm...)
	wantErrno(t, "append", writeThrough(p, os.O_WRONLY|os.O_APPEND), eperm...)
	wantErrno(t, "append (rdwr)", writeThrough(p, os.O_RDWR|os.O_APPEND), eperm...)
	err = os.WriteFile(p, []byte("x"), 0o644)
	wantErrno(t, "write file (O_TRUNC)", err, eperm...)
	wantErrno(t, "truncate", os.Truncate(p, 0), eperm...)
	wantErrno(t, "chmod", os.Chmod(p, 0o600), eperm...)
	future := time.Now().Add(time.Hour)
	wantErrno(t, "touch", os.Chtimes(p, future, future), eperm...)
	wantErrno(t, "unlink", os.Remove(p), eperm...)
	wantErrno(t, "rename from", os.Rename(p, tm.p("moved.md")), eperm...)
	tm.write("other.md", memoryFile("Other", "Other file", "x"))
	wantErrno(t, "rename over", os.Rename(tm.p("other.md"), p), eperm...)
	wantErrno(t, "hard link", os.Link(p, tm.p("link.md")), syscall.EPERM)

	if got, _ := os.ReadFile(tm.b(ro)); string(got) != string(orig) {
		t.Errorf("backing read_only file changed: %q", got)
	}
	if fi, _ := os.Stat(tm.b(ro)); fi.Mode() != origInfo.Mode() || !fi.ModTime().Equal(origInfo.ModTime()) {
		t.Errorf("backing mode or mtime changed: %v %v -> %v %v", origInfo.Mode(), origInfo.ModTime(), fi.Mode(), fi.ModTime())
	}
	// A directory holding a read_only memory cannot move either.
	tm2 := mountRepo(t, newRepo(t, map[string]string{"system/rules.md": "---\ndescription: Rules\nread_only: true\n---\n# Rules\n\nBe kind.\n"}), opt)
	wantErrno(t, "rename dir with read_only memory", os.Rename(tm2.p("system"), tm2.p("sys2")), eperm...)
	if got := tm.read(ro); got != string(orig) {
		t.Errorf("read through mount = %q", got)
	}
	tm.settle()
	tm.clean()
}

// A new file written with read_only: true is invalid (never committed), so
// it is not protected either: it can be fixed or removed through the
// mount (issue 14, defect 10).
func TestNewReadOnlyFileCanBeFixed(t *testing.T) {
	tm := mountRepo(t, newRepo(t, nil), Options{})
	const rel = "user_memory/locked.md"
	locked := "---\ndescription: Locked at birth\nread_only: true\n---\n# Locked\n\n## Fact\nx\n"
	tm.write(rel, locked)
	tm.settle()
	if out := tm.git("ls-files", rel); out != "" {
		t.Fatalf("a new read_only file was committed")
	}
	if fi, err := os.Stat(tm.p(rel)); err != nil || fi.Mode().Perm()&0o200 == 0 {
		t.Errorf("uncommitted read_only file reported as %v (%v), want writable", fi.Mode(), err)
	}
	tm.write(rel, memoryFile("Locked", "Not locked any more", "x"))
	tm.settle()
	if out := tm.git("ls-files", rel); out == "" {
		t.Errorf("the fixed file was not committed")
	}
	tm.write("user_memory/locked2.md", locked)
	if err := os.Remove(tm.p("user_memory/locked2.md")); err != nil {
		t.Errorf("remove an uncommitted read_only file: %v", err)
	}
	tm.settle()
	tm.clean()
}

func TestGitReadOnly(t *testing.T) {
	tm := mountRepo(t, newRepo(t, nil), Options{})
	g := tm.p(".git")
	head, err := os.ReadFile(filepath.Join(g, "HEAD"))
	if err != nil || !strings.HasPrefix(string(head), "ref:") {
		t.Fatalf("read .git/HEAD: %q %v", head, err)
	}
	erofs := syscall.EROFS
	wantErrno(t, "write HEAD", writeThrough(filepath.Join(g, "HEAD"), os.O_WRONLY), erofs)
	wantErrno(t, "append to HEAD", writeThrough(filepath.Join(g, "HEAD"), os.O_WRONLY|os.O_APPEND), erofs)
	wantErrno(t, "open HEAD with O_TRUNC", writeThrough(filepath.Join(g, "HEAD"), os.O_RDWR|os.O_TRUNC), erofs)
	wantErrno(t, "touch HEAD", os.Chtimes(filepath.Join(g, "HEAD"), time.Now(), time.Now()), erofs)
	wantErrno(t, "create", os.WriteFile(filepath.Join(g, "new"), nil, 0o644), erofs)
	wantErrno(t, "mkdir", os.Mkdir(filepath.Join(g, "d"), 0o755), erofs)
	wantErrno(t, "unlink", os.Remove(filepath.Join(g, "HEAD")), erofs)
	wantErrno(t, "rmdir", os.Remove(filepath.Join(g, "refs", "tags")), erofs)
	wantErrno(t, "rename inside", os.Rename(filepath.Join(g, "HEAD"), filepath.Join(g, "HEAD2")), erofs)
	wantErrno(t, "rename out", os.Rename(filepath.Join(g, "description"), tm.p("description")), erofs)
	tm.write("x.txt", "x")
	wantErrno(t, "rename in", os.Rename(tm.p("x.txt"), filepath.Join(g, "x.txt")), erofs)
	wantErrno(t, "chmod", os.Chmod(filepath.Join(g, "HEAD"), 0o600), erofs)
	wantErrno(t, "truncate", os.Truncate(filepath.Join(g, "HEAD"), 0), erofs)
	wantErrno(t, "symlink", os.Symlink("HEAD", filepath.Join(g, "s")), erofs)
	wantErrno(t, "link", os.Link(tm.p("x.txt"), filepath.Join(g, "l")), erofs)
	wantErrno(t, "rename .git", os.Rename(g, tm.p("git2")), erofs)

	// git log works inside the mount.
	if out := git(t, tm.mnt, "log", "--oneline"); !strings.Contains(out, "seed") {
		t.Errorf("git log in the mount: %q", out)
	}
	if got, _ := os.ReadFile(filepath.Join(tm.dir, ".git", "HEAD")); string(got) != string(head) {
		t.Errorf("backing HEAD changed")
	}
	tm.settle()
	tm.clean()
}

func TestSynthesizedFilesRefuseWrites(t *testing.T) {
	tm := mountRepo(t, newRepo(t, nil), Options{})
	for _, rel := range []string{"user_memory.md", "CONTEXT.md", ".mindmount/status"} {
		wantErrno(t, "write "+rel, writeThrough(tm.p(rel), os.O_WRONLY), syscall.EACCES, syscall.EPERM)
		wantErrno(t, "append to "+rel, writeThrough(tm.p(rel), os.O_WRONLY|os.O_APPEND), syscall.EACCES, syscall.EPERM)
		wantErrno(t, "truncate "+rel, writeThrough(tm.p(rel), os.O_WRONLY|os.O_TRUNC), syscall.EACCES, syscall.EPERM)
		wantErrno(t, "unlink "+rel, os.Remove(tm.p(rel)), syscall.EACCES, syscall.EPERM)
	}
	if _, err := os.Stat(tm.b("user_memory.md")); !os.IsNotExist(err) {
		t.Errorf("synthesized file reached the backing tree: %v", err)
	}
	wantErrno(t, "rmdir .mindmount", os.Remove(tm.p(".mindmount")), syscall.EBUSY, syscall.EPERM, syscall.ENOTEMPTY)
}

func TestConsolidateControlFile(t *testing.T) {
	tm := mountRepo(t, newRepo(t, nil), Options{})
	if err := os.WriteFile(tm.p(".mindmount/consolidate"), []byte("now\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	<-tm.consolidations
	if _, err := os.Stat(tm.b(".mindmount/consolidate")); !os.IsNotExist(err) {
		t.Errorf("control file reached the backing tree: %v", err)
	}
}

func TestSearchFile(t *testing.T) {
	tm := mountRepo(t, newRepo(t, nil), Options{})
	got := tm.read(".mindmount/search/green tea")
	if first := firstHit(got); first != "user_memory/likes-tea.md" {
		t.Errorf("first hit %q; search result:\n%s", first, got)
	}
	fi, err := os.Stat(tm.p(".mindmount/search/green tea"))
	if err != nil || int(fi.Size()) != len(got) {
		t.Errorf("stat of search result: %v, want size %d", err, len(got))
	}
	// A memory written a moment ago is found at once.
	tm.write("user_memory/keeps-bees.md", memoryFile("Keeps Bees", "Keeps two beehives in the garden", "You keep two beehives."))
	if first := firstHit(tm.read(".mindmount/search/beehives")); first != "user_memory/keeps-bees.md" {
		t.Errorf("fresh memory not found first: %q", first)
	}
	if ents, err := os.ReadDir(tm.p(".mindmount/search")); err != nil || len(ents) != 0 {
		t.Errorf("ls .mindmount/search: %v %v", ents, err)
	}
}

// firstHit returns the path of the first entry of a rendered search.
func firstHit(md string) string {
	for _, line := range strings.Split(md, "\n") {
		if strings.HasPrefix(line, "1. ") {
			return strings.Fields(line)[1]
		}
	}
	return ""
}

// TestGitLogSeesNewCommits: the daemon's commits change .git beside the
// mount (the branch ref is replaced by rename, logs grow), so a ref read
// through the mount before a commit must not be served from the kernel's
// cache after it.
func TestGitLogSeesNewCommits(t *testing.T) {
	tm := mountRepo(t, newRepo(t, nil), Options{})
	before := git(t, tm.mnt, "log", "--format=%H")
	ref := filepath.Join(tm.p(".git"), "refs", "heads", "main")
	old, err := os.ReadFile(ref)
	if err != nil {
		t.Fatal(err)
	}
	tm.write("user_memory/tea.md", memoryFile("Tea", "Likes green tea", "You like green tea."))
	tm.settle()
	head := git(t, tm.dir, "rev-parse", "HEAD")
	if strings.HasPrefix(string(old), head) {
		t.Fatalf("no commit was made")
	}
	if got, _ := os.ReadFile(ref); strings.TrimSpace(string(got)) != head {
		t.Errorf("ref through the mount = %q, backing HEAD %s", got, head)
	}
	after := git(t, tm.mnt, "log", "--format=%H %s")
	if !strings.HasPrefix(after, head) || strings.Count(after, "\n") != strings.Count(before, "\n")+1 {
		t.Errorf("git log in the mount after a commit:\n%s\nbefore:\n%s", after, before)
	}
	if out := git(t, tm.mnt, "show", "--name-only", "--format=", "HEAD"); out != "user_memory/tea.md" {
		t.Errorf("git show HEAD in the mount: %q", out)
	}
}

// TestGitObjectListingsAfterCommit: the kernel may cache the listings of the
// loose-object folders (they are most of .git), so the invalidator must
// drop them after a commit: git resolves an abbreviated hash by listing
// .git/objects/xx.
func TestGitObjectListingsAfterCommit(t *testing.T) {
	dir := newRepo(t, nil)
	// Objects in (nearly) every fan-out folder, so the new commit's folder
	// is one whose listing the kernel has cached below.
	tmp := t.TempDir()
	var paths strings.Builder
	for i := range 3000 {
		p := filepath.Join(tmp, strconv.Itoa(i))
		if err := os.WriteFile(p, []byte("blob "+strconv.Itoa(i)), 0o644); err != nil {
			t.Fatal(err)
		}
		paths.WriteString(p + "\n")
	}
	cmd := exec.Command("git", "-C", dir, "hash-object", "-w", "--stdin-paths")
	cmd.Stdin = strings.NewReader(paths.String())
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("hash-object: %v\n%s", err, out)
	}
	tm := mountRepo(t, dir, Options{})
	fanouts, err := os.ReadDir(tm.p(".git/objects"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range fanouts {
		os.ReadDir(tm.p(".git/objects/" + e.Name())) // cache every listing
	}
	tm.write("user_memory/tea.md", memoryFile("Tea", "Likes green tea", "You like green tea."))
	tm.settle()
	head := git(t, tm.dir, "rev-parse", "HEAD")
	if _, err := os.Stat(filepath.Join(tm.dir, ".git", "objects", head[:2])); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the new commit object in its folder's listing", func() bool {
		ents, _ := os.ReadDir(tm.p(".git/objects/" + head[:2]))
		for _, e := range ents {
			if e.Name() == head[2:] {
				return true
			}
		}
		return false
	})
	eventually(t, "git show of the abbreviated new commit inside the mount", func() bool {
		out, err := inDir(tm.mnt, "git", "show", "-s", "--format=%H", head[:7]).CombinedOutput()
		return err == nil && strings.TrimSpace(string(out)) == head
	})
}
