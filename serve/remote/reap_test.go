package remote

import (
	"context"
	"crypto/rand"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// children lists this process's child processes (running or defunct) as
// "pid comm state", from /proc.
func children(t *testing.T) []string {
	t.Helper()
	ents, err := os.ReadDir("/proc")
	if err != nil {
		t.Skip("no /proc")
	}
	me := os.Getpid()
	var out []string
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid …; comm may hold spaces: cut at the last ')'.
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:])
		if len(f) < 2 || f[1] != strconv.Itoa(me) {
			continue
		}
		out = append(out, e.Name()+" "+s[strings.IndexByte(s, '(')+1:i]+" "+f[0])
	}
	return out
}

// TestSyncReapsGitOnARefusedPack: a remote on this machine (a bare
// repository by path, which go-git serves through a git-upload-pack child)
// holds a file over MaxBlob. The sync is refused — and when it returns, no
// child it started is left, running or defunct, and its log line says why
// it stopped. The same for a sync whose context ends while the child
// waits.
func TestSyncReapsGitOnARefusedPack(t *testing.T) {
	bare := filepath.Join(t.TempDir(), "memory.git")
	mustRun(t, filepath.Dir(bare), "git", "init", "-q", "--bare", "-b", "main", bare)
	a := newNode(t, seed)
	if err := SetURL(a.dir, bare); err != nil {
		t.Fatal(err)
	}
	big := make([]byte, 2<<20) // incompressible: more than a pipe holds
	rand.Read(big)
	a.write("notes/huge.bin", string(big))
	a.flush()
	if _, err := a.s.Sync(context.Background()); err != nil {
		t.Fatal(err)
	}
	if c := children(t); len(c) != 0 {
		t.Fatalf("children left by a good sync: %v", c)
	}
	old := MaxBlob
	MaxBlob = 4 << 10
	defer func() { MaxBlob = old }()
	b := newNode(t, nil)
	if err := SetURL(b.dir, bare); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { _, err := b.s.Sync(context.Background()); done <- err }()
	select {
	case err := <-done:
		if !errors.Is(err, ErrBlobTooLarge) {
			t.Fatalf("sync with a file over the limit: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("the refused sync did not return; children %v", children(t))
	}
	if c := children(t); len(c) != 0 {
		t.Fatalf("children left by a refused sync: %v", c)
	}
	if l := b.logs.String(); !strings.Contains(l, "sync failed") || !strings.Contains(l, "more than the 4 KiB a sync takes") {
		t.Fatalf("no log line says why the sync stopped:\n%s", l)
	}
}
