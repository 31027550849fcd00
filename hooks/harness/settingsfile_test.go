package harness

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestInstallRefusesHostileSettings: a project's .claude/settings.local.json
// (as a cloned repository could ship it) that is a symbolic link out of the
// project, a link to /dev/zero, a FIFO or an oversized file is refused with
// a reason, and nothing outside the project is read or written; install
// never hangs (the test has its own deadline).
func TestInstallRefusesHostileSettings(t *testing.T) {
	victimDir := t.TempDir()
	victim := filepath.Join(victimDir, "root.json")
	const victimText = `{"hooks": {}, "owner": "root"}` + "\n"
	for _, c := range []struct {
		name  string
		plant func(p string) error
		want  error
	}{
		{"a link to a file outside", func(p string) error { return os.Symlink(victim, p) }, ErrSettingsOutside},
		{"a link to /dev/zero", func(p string) error { return os.Symlink("/dev/zero", p) }, ErrSettingsOutside},
		{"a dangling link", func(p string) error { return os.Symlink(filepath.Join(victimDir, "new.json"), p) }, ErrSettingsOutside},
		{"its folder a link outside", func(p string) error {
			os.Remove(filepath.Dir(p))
			return os.Symlink(victimDir, filepath.Dir(p))
		}, ErrSettingsOutside},
		{"a FIFO", func(p string) error { return syscall.Mkfifo(p, 0o644) }, ErrSettingsNotRegular},
		{"an oversized file", func(p string) error {
			f, err := os.Create(p)
			if err != nil {
				return err
			}
			defer f.Close()
			return f.Truncate(maxSettings + 1)
		}, ErrSettingsTooLarge},
	} {
		if err := os.WriteFile(victim, []byte(victimText), 0o644); err != nil {
			t.Fatal(err)
		}
		home, proj := t.TempDir(), t.TempDir()
		p := filepath.Join(proj, ".claude", "settings.local.json")
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := c.plant(p); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		o := InstallOptions{Harness: ClaudeCode, Scope: "project", Home: home, Project: proj, Memory: "/mem", Mindmount: "/bin/mindmount"}
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		done := make(chan error, 1)
		go func() {
			_, err := Install(o)
			done <- err
		}()
		var err error
		select {
		case err = <-done:
		case <-ctx.Done():
			t.Fatalf("%s: install hangs", c.name)
		}
		cancel()
		if !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
		if b, _ := os.ReadFile(victim); string(b) != victimText {
			t.Errorf("%s: the file outside the project was rewritten:\n%s", c.name, b)
		}
		if ents, _ := os.ReadDir(victimDir); len(ents) != 1 {
			t.Errorf("%s: install wrote beside the file outside the project: %v", c.name, ents)
		}
	}
}

// TestInstallFollowsLinkInsideHome: a dotfile manager's link inside the
// home folder stays a link, and the file it names is the one edited.
func TestInstallFollowsLinkInsideHome(t *testing.T) {
	home := t.TempDir()
	dots := filepath.Join(home, "dotfiles", "claude.json")
	os.MkdirAll(filepath.Dir(dots), 0o755)
	os.WriteFile(dots, []byte(`{"theme": "dark"}`+"\n"), 0o600)
	os.MkdirAll(filepath.Join(home, ".claude"), 0o755)
	link := filepath.Join(home, ".claude", "settings.json")
	os.Symlink(dots, link)
	o := InstallOptions{Harness: ClaudeCode, Scope: "user", Home: home, Memory: "/mem", Mindmount: "/bin/mindmount"}
	if _, err := Install(o); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("the link was replaced: %v", err)
	}
	b, _ := os.ReadFile(dots)
	if !strings.Contains(string(b), "mindmount") || !strings.Contains(string(b), `"theme"`) {
		t.Fatalf("the linked file:\n%s", b)
	}
	if fi, _ := os.Stat(dots); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want the file's own 0600", fi.Mode().Perm())
	}
}
