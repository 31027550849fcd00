package atomicfile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// entries lists the names in dir.
func entries(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

func TestWriteFile(t *testing.T) {
	old := syscall.Umask(0o077) // the mode is exact: the umask does not narrow it
	defer syscall.Umask(old)
	for _, tc := range []struct {
		name string
		old  string // "": no file yet
		perm fs.FileMode
		data string
	}{
		{name: "new credentials", perm: 0o600, data: "https://github.com tok\n"},
		{name: "replace tokens", old: "old\n", perm: 0o600, data: "{}\n"},
		{name: "registry", old: "{\"users\":[]}\n", perm: 0o644, data: "{\"users\":[{}]}\n"},
		{name: "hook", perm: 0o755, data: "#!/bin/sh\nexec mindmount hook\n"},
		{name: "empty", old: "something", perm: 0o644, data: ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			p := filepath.Join(dir, "file")
			if tc.old != "" {
				if err := os.WriteFile(p, []byte(tc.old), 0o640); err != nil {
					t.Fatal(err)
				}
			}
			if err := WriteFile(p, []byte(tc.data), tc.perm); err != nil {
				t.Fatal(err)
			}
			b, err := os.ReadFile(p)
			if err != nil || string(b) != tc.data {
				t.Fatalf("content %q, %v; want %q", b, err, tc.data)
			}
			fi, err := os.Stat(p)
			if err != nil || fi.Mode().Perm() != tc.perm {
				t.Fatalf("mode %v, %v; want %v", fi.Mode().Perm(), err, tc.perm)
			}
			if got := entries(t, dir); len(got) != 1 || got[0] != "file" {
				t.Fatalf("directory holds %q, want only the file", got)
			}
		})
	}
}

// TestFailedRenameKeepsOld: when the rename fails (a crash at that point
// looks the same on disk), the old content is whole and no temp is left.
func TestFailedRenameKeepsOld(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "credentials")
	if err := os.WriteFile(p, []byte("old\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("rename failed")
	var tempSeen string
	rename = func(from, to string) error {
		tempSeen = filepath.Base(from)
		return boom
	}
	defer func() { rename = os.Rename }()
	if err := WriteFile(p, []byte("new\n"), 0o600); !errors.Is(err, boom) {
		t.Fatalf("WriteFile = %v, want the rename's error", err)
	}
	if b, _ := os.ReadFile(p); string(b) != "old\n" {
		t.Fatalf("old file changed: %q", b)
	}
	if got := entries(t, dir); len(got) != 1 {
		t.Fatalf("directory holds %q, want only the old file", got)
	}
	if !IsTemp(tempSeen) || !strings.HasPrefix(tempSeen, ".credentials.") {
		t.Fatalf("temp name %q: want .credentials.<random>.tmp", tempSeen)
	}
}

// TestCrashBeforeCommit: a writer that dies after writing the temp file
// leaves the old content in place and a temp name IsTemp recognises.
func TestCrashBeforeCommit(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "registry.json")
	if err := os.WriteFile(p, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := Create(p, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write([]byte("half of the ne")); err != nil {
		t.Fatal(err)
	}
	// The process "dies" here: nothing commits or removes the temp file.
	if b, _ := os.ReadFile(p); string(b) != "old" {
		t.Fatalf("target changed before Commit: %q", b)
	}
	var temps []string
	for _, n := range entries(t, dir) {
		if n != "registry.json" {
			temps = append(temps, n)
			if !IsTemp(n) {
				t.Errorf("the temp %q is not recognised as temp", n)
			}
			fi, err := os.Stat(filepath.Join(dir, n))
			if err != nil || fi.Mode().Perm() != 0o600 {
				t.Errorf("the temp's mode is %v (%v), want 0600 until Commit", fi.Mode().Perm(), err)
			}
		}
	}
	if len(temps) != 1 {
		t.Fatalf("temps %q, want one", temps)
	}
	f.Abort()
	if got := entries(t, dir); len(got) != 1 {
		t.Fatalf("Abort left %q", got)
	}
	if err := f.Commit(); err == nil {
		t.Fatal("Commit after Abort succeeded")
	}
}

func TestMissingDirectory(t *testing.T) {
	p := filepath.Join(t.TempDir(), "no", "such", "file")
	if err := WriteFile(p, []byte("x"), 0o644); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("WriteFile into a missing directory = %v", err)
	}
}

func TestTempName(t *testing.T) {
	seen := map[string]bool{}
	for _, base := range []string{"file", "likes-tea.md", "CONTEXT.md", ".credentials", strings.Repeat("é", 200)} {
		for range 20 {
			n := TempName(base)
			if !IsTemp(n) || !strings.HasPrefix(n, ".") || len(n) > 255 || strings.Contains(n, "/") {
				t.Fatalf("TempName(%.20q) = %q", base, n)
			}
			if !strings.HasPrefix(n, "."+base[:min(len(base), 10)]) {
				t.Fatalf("TempName(%.20q) = %q does not name its file", base, n)
			}
			if seen[n] {
				t.Fatalf("TempName(%.20q) repeated %q", base, n)
			}
			seen[n] = true
		}
	}
}

func TestIsTemp(t *testing.T) {
	for name, want := range map[string]bool{
		".likes-tea.md.k3j9x2.tmp": true,
		"a.tmp":                    true,
		"A.TMP":                    true,
		".tmp":                     true,
		"tmp":                      false,
		"likes-tea.md":             false,
		"tmp.md":                   false,
		"x.tmpl":                   false,
		"":                         false,
	} {
		if got := IsTemp(name); got != want {
			t.Errorf("IsTemp(%q) = %v, want %v", name, got, want)
		}
	}
}
