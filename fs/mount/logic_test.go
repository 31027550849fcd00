package mount

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mindmount/mindmount/fs/tracker"
	"github.com/mindmount/mindmount/memgraph"
)

// TestIsGit is the mount's rule for the repository's own .git (read
// through the mount, never cached for long, never written).
func TestIsGit(t *testing.T) {
	tests := map[string]bool{
		".git": true, ".git/HEAD": true, ".git/refs/heads/main": true,
		".gitignore": false, ".github/workflows/ci.yml": false, "notes/.git/x": false,
		"user_memory.md": false,
	}
	for rel, want := range tests {
		if got := isGit(rel); got != want {
			t.Errorf("isGit(%q) = %v", rel, got)
		}
	}
}

func TestToErrno(t *testing.T) {
	tests := []struct {
		err  error
		want syscall.Errno
	}{
		{nil, 0},
		{tracker.ErrGitDir, syscall.EROFS},
		{fmt.Errorf("wrapped: %w", tracker.ErrReadOnly), syscall.EPERM},
		{tracker.ErrInbox, syscall.EPERM},
		{tracker.ErrCursor, syscall.EPERM},
		{tracker.ErrNotMemory, syscall.EPERM},
		{errHardLink, syscall.EPERM},
		{tracker.ErrSynthesized, syscall.EACCES},
		{errStateDir, syscall.EBUSY},
		{fmt.Errorf("%w: x", tracker.ErrBadName), syscall.EINVAL},
		{fmt.Errorf("%w: %w", tracker.ErrBadName, memgraph.ErrSecretName), syscall.EINVAL},
		{errGone, syscall.ENOENT},
		{errVirtualDir, syscall.EXDEV},
		{errSpecialFile, syscall.EPERM},
		{errXattr, syscall.EPERM},
		{errTmpfile, syscall.EOPNOTSUPP},
		{&fs.PathError{Op: "open", Path: "x", Err: syscall.ENOSPC}, syscall.ENOSPC},
		{fs.ErrNotExist, syscall.ENOENT},
		{fs.ErrExist, syscall.EEXIST},
		{fs.ErrPermission, syscall.EACCES},
		{errors.New("surprise"), syscall.EIO},
	}
	for _, tt := range tests {
		if got := toErrno(nil, "test", tt.err); got != tt.want {
			t.Errorf("toErrno(%v) = %v, want %v", tt.err, got, tt.want)
		}
	}
}

func TestUnescapeMount(t *testing.T) {
	tests := map[string]string{
		`/tmp/plain`:          "/tmp/plain",
		`/tmp/with\040space`:  "/tmp/with space",
		`/tmp/tab\011and\134`: "/tmp/tab\tand\\",
		`/tmp/trailing\`:      `/tmp/trailing\`,
	}
	for in, want := range tests {
		if got := unescapeMount(in); got != want {
			t.Errorf("unescapeMount(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestCallerNames(t *testing.T) {
	c := newCallerNames()
	now := time.Unix(1000, 0)
	c.now = func() time.Time { return now }
	self := uint32(os.Getpid())
	b, _ := os.ReadFile("/proc/self/comm")
	want := strings.TrimSpace(string(b))
	if got := c.pid(self); got != want {
		t.Errorf("pid(self) = %q, want %q", got, want)
	}
	c.names.put(self, "cached", now)
	if got := c.pid(self); got != "cached" {
		t.Errorf("within the TTL: %q, want the cached name", got)
	}
	now = now.Add(callerTTL)
	if got := c.pid(self); got != want {
		t.Errorf("after the TTL: %q, want a fresh read", got)
	}
	if got := c.pid(1 << 30); got != "" {
		t.Errorf("missing pid: %q", got)
	}
}

func TestGitImmutable(t *testing.T) {
	tests := []struct {
		rel  string
		want bool
	}{
		{".git/objects/ab/cdef0123456789abcdef0123456789abcdef01", true},
		{".git/objects/pack/pack-0123abcd.pack", true},
		{".git/objects/pack/pack-0123abcd.idx", true},
		{".git/objects/pack/pack-0123abcd.rev", true},
		{".git/objects/pack/pack-0123abcd.keep", false},
		{".git/objects/pack", false},
		{".git/objects/ab", false},
		{".git/objects/info/packs", false},
		{".git/objects/ab/tmp_obj_123", false},
		{".git/objects/AB/cdef0123456789abcdef0123456789abcdef01", false},
		{".git/objects/ab/cd/ef", false},
		{".git/refs/heads/main", false},
		{".git/HEAD", false},
		{".git/index", false},
		{"objects/ab/cdef0123456789abcdef0123456789abcdef01", false},
	}
	for _, tt := range tests {
		if got := gitImmutable(tt.rel); got != tt.want {
			t.Errorf("gitImmutable(%q) = %v, want %v", tt.rel, got, tt.want)
		}
		if tt.want && !gitStable(tt.rel) {
			t.Errorf("gitStable(%q) = false for an object file", tt.rel)
		}
	}
	for rel, want := range map[string]bool{
		".git/objects": true, ".git/objects/pack": true, ".git/objects/ab": true,
		".git/objects/info": false, ".git/objects/info/commit-graph": false, ".git/refs": false, ".git": false,
	} {
		if got := gitStable(rel); got != want {
			t.Errorf("gitStable(%q) = %v, want %v", rel, got, want)
		}
	}
}

func TestOwnWrites(t *testing.T) {
	dir := t.TempDir()
	a, b := dir+"/a.md", dir+"/b.md"
	os.WriteFile(a, []byte("one\n"), 0o644)
	var o ownWrites
	if o.ours(a, "a.md") {
		t.Fatal("empty set reports a path")
	}
	o.mark(a, "a.md")
	if !o.ours(a, "a.md") || o.ours(b, "b.md") {
		t.Fatalf("ours(a)=%v ours(b)=%v", o.ours(a, "a.md"), o.ours(b, "b.md"))
	}
	// An append beside the mount after ours: not ours any more.
	f, _ := os.OpenFile(a, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString("two\n")
	f.Close()
	if o.ours(a, "a.md") {
		t.Fatal("a file changed after our write still counts as ours")
	}
	o.mark(a, "a.md")
	m := o.at["a.md"]
	m.at = time.Now().Add(-2 * ownWindow) // an old change is not ours any more
	o.at["a.md"] = m
	if o.ours(a, "a.md") {
		t.Fatal("a change older than the window still counts as ours")
	}
	o.sweep = time.Time{}
	o.mark(b, "b.md") // sweeps the expired entry
	if _, ok := o.at["a.md"]; ok {
		t.Fatal("expired entry not swept")
	}
	if !o.ours(b, "b.md") {
		t.Fatal("a removal through the mount (no file) is not ours")
	}
}
