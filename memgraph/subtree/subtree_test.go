package subtree

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// fixture is a tree with a canary outside it and symlinks planted inside:
// the attacks of issue 22 (a folder swapped for a link to /etc, a link at
// the file itself, an absolute link, "..").
func fixture(t *testing.T) (tree *Tree, dir, canary string) {
	t.Helper()
	base := t.TempDir()
	dir = filepath.Join(base, "repo")
	secret := filepath.Join(base, "secret")
	for _, d := range []string{dir, secret, filepath.Join(dir, "user_memory"), filepath.Join(dir, "real")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	canary = filepath.Join(secret, "shadow")
	write(t, canary, "CANARY-root-only")
	write(t, filepath.Join(dir, "user_memory", "a.md"), "inside")
	write(t, filepath.Join(dir, "real", "f"), "real")
	for link, to := range map[string]string{
		"s":                   secret,      // a folder swapped for a link out
		"user_memory/out.md":  canary,      // a link at the file itself
		"rel":                 "../secret", // a relative escape
		"inlink":              "real",      // a link that stays inside
		"user_memory/self.md": "a.md",      // ditto, at the file
	} {
		if err := os.Symlink(to, filepath.Join(dir, link)); err != nil {
			t.Fatal(err)
		}
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	tree, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tree.Close() })
	return tree, dir, canary
}

func write(t *testing.T, p, s string) {
	t.Helper()
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

// both runs fn with openat2 and with the component walk used where the
// kernel has none.
func both(t *testing.T, fn func(t *testing.T)) {
	t.Run("openat2", fn)
	t.Run("walk", func(t *testing.T) {
		noOpenat2.Store(true)
		defer noOpenat2.Store(false)
		fn(t)
	})
}

func TestReadFileRefusesEveryLink(t *testing.T) {
	both(t, func(t *testing.T) {
		tree, _, _ := fixture(t)
		for _, tc := range []struct {
			rel  string
			want error // nil: reads
		}{
			{"user_memory/a.md", nil},
			{"real/f", nil},
			{"s/shadow", ErrUnsafePath},
			{"rel/shadow", ErrUnsafePath},
			{"user_memory/out.md", ErrUnsafePath},
			{"inlink/f", ErrUnsafePath}, // no link is followed, even one that stays inside
			{"user_memory/self.md", ErrUnsafePath},
			{"../secret/shadow", ErrUnsafePath},
			{"/etc/passwd", ErrUnsafePath},
			{"user_memory/../../secret/shadow", ErrUnsafePath},
			{"fifo", ErrNotRegular},
			{"user_memory", ErrNotRegular},
			{"missing", fs.ErrNotExist},
		} {
			b, err := tree.ReadFile(tc.rel, 0)
			if tc.want == nil {
				if err != nil {
					t.Errorf("ReadFile(%q): %v", tc.rel, err)
				}
				continue
			}
			if !errors.Is(err, tc.want) {
				t.Errorf("ReadFile(%q) = %q, %v; want %v", tc.rel, b, err, tc.want)
			}
			if strings.Contains(string(b), "CANARY") {
				t.Errorf("ReadFile(%q) read the canary", tc.rel)
			}
		}
	})
}

func TestReadFileLimit(t *testing.T) {
	tree, dir, _ := fixture(t)
	write(t, filepath.Join(dir, "big"), strings.Repeat("x", 100))
	if _, err := tree.ReadFile("big", 99); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("over the limit: %v", err)
	}
	if b, err := tree.ReadFile("big", 100); err != nil || len(b) != 100 {
		t.Fatalf("at the limit: %d bytes, %v", len(b), err)
	}
}

func TestOpenFileCreateNeverThroughALink(t *testing.T) {
	both(t, func(t *testing.T) {
		tree, dir, canary := fixture(t)
		for _, rel := range []string{"s/new", "s/shadow", "user_memory/out.md", "rel/new"} {
			f, err := tree.OpenFile(rel, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
			if err == nil {
				f.Close()
				t.Errorf("OpenFile(%q) for writing succeeded", rel)
			} else if !errors.Is(err, ErrUnsafePath) {
				t.Errorf("OpenFile(%q): %v, want ErrUnsafePath", rel, err)
			}
		}
		if b, _ := os.ReadFile(canary); string(b) != "CANARY-root-only" {
			t.Fatalf("canary changed: %q", b)
		}
		if _, err := os.Stat(filepath.Join(filepath.Dir(canary), "new")); err == nil {
			t.Fatal("a file was created outside the tree")
		}
		f, err := tree.OpenFile("user_memory/new.md", os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err != nil {
			t.Fatal(err)
		}
		f.Close()
		if fi, err := os.Stat(filepath.Join(dir, "user_memory/new.md")); err != nil || fi.Mode().Perm() != 0o600 {
			t.Fatalf("created file: %v %v", fi, err)
		}
	})
}

func TestMkdirAll(t *testing.T) {
	both(t, func(t *testing.T) {
		tree, dir, canary := fixture(t)
		if err := tree.MkdirAll("transcripts/http/x", 0o700); err != nil {
			t.Fatal(err)
		}
		if fi, err := os.Lstat(filepath.Join(dir, "transcripts/http/x")); err != nil || !fi.IsDir() {
			t.Fatalf("%v %v", fi, err)
		}
		for _, rel := range []string{"s/sub", "inlink/sub", "rel"} {
			if err := tree.MkdirAll(rel, 0o700); !errors.Is(err, ErrUnsafePath) {
				t.Errorf("MkdirAll(%q): %v, want ErrUnsafePath", rel, err)
			}
		}
		if _, err := os.Stat(filepath.Join(filepath.Dir(canary), "sub")); err == nil {
			t.Fatal("a directory was made outside the tree")
		}
	})
}

func TestLstatAndRemove(t *testing.T) {
	both(t, func(t *testing.T) {
		tree, dir, canary := fixture(t)
		fi, err := tree.Lstat("user_memory/out.md")
		if err != nil || fi.Mode()&fs.ModeSymlink == 0 {
			t.Fatalf("Lstat of a link: %v %v", fi, err)
		}
		if _, err := tree.Lstat("s/shadow"); !errors.Is(err, ErrUnsafePath) {
			t.Fatalf("Lstat through a link: %v", err)
		}
		if err := tree.Remove("s/shadow"); !errors.Is(err, ErrUnsafePath) {
			t.Fatalf("Remove through a link: %v", err)
		}
		if err := tree.Remove("user_memory/out.md"); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Lstat(filepath.Join(dir, "user_memory/out.md")); !errors.Is(err, fs.ErrNotExist) {
			t.Fatal("the link is still there")
		}
		if _, err := os.Stat(canary); err != nil {
			t.Fatal("removing the link removed its target")
		}
		if err := tree.Remove("."); err == nil {
			t.Fatal("removed the root")
		}
	})
}

func TestWalkDirNeverFollows(t *testing.T) {
	tree, _, _ := fixture(t)
	var seen []string
	err := tree.WalkDir(".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		seen = append(seen, p)
		if d.Type()&fs.ModeSymlink == 0 && d.Type().IsRegular() {
			b, err := fs.ReadFile(tree.FS(), p)
			if err != nil {
				return err
			}
			if strings.Contains(string(b), "CANARY") {
				t.Errorf("walk read the canary through %s", p)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range seen {
		if strings.HasPrefix(p, "s/") || strings.HasPrefix(p, "rel/") || strings.HasPrefix(p, "inlink/") {
			t.Errorf("walked through a link: %s", p)
		}
	}
	if !strings.Contains(strings.Join(seen, " "), "user_memory/a.md") {
		t.Fatalf("walk missed a file: %v", seen)
	}
}

// FuzzOpenFd: whatever the path, a descriptor OpenFd returns names
// something inside the tree.
func FuzzOpenFd(f *testing.F) {
	for _, s := range []string{"user_memory/a.md", "s/shadow", "../secret", "/etc", ".", "a/../../x", "inlink/f", "rel", "user_memory//a.md", "\x00"} {
		f.Add(s)
	}
	base := f.TempDir()
	dir := filepath.Join(base, "repo")
	os.MkdirAll(filepath.Join(dir, "user_memory"), 0o755)
	os.WriteFile(filepath.Join(dir, "user_memory/a.md"), []byte("x"), 0o644)
	os.Symlink(base, filepath.Join(dir, "s"))
	os.Symlink("..", filepath.Join(dir, "up"))
	tree, err := Open(dir)
	if err != nil {
		f.Fatal(err)
	}
	defer tree.Close()
	f.Fuzz(func(t *testing.T, rel string) {
		fd, err := tree.OpenFd(rel, unix.O_PATH, 0)
		if err != nil {
			return
		}
		defer unix.Close(fd)
		got, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(fd))
		if err != nil {
			t.Fatal(err)
		}
		if got != dir && !strings.HasPrefix(got, dir+"/") {
			t.Fatalf("OpenFd(%q) opened %s, outside %s", rel, got, dir)
		}
	})
}
