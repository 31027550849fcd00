package harness

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestOneBackupPerFile: install, uninstall and install again over a
// settings file of the user's leave one backup of it, the file as it was
// before mindmount first changed it; every run names that backup.
func TestOneBackupPerFile(t *testing.T) {
	home := t.TempDir()
	settings := filepath.Join(home, ".claude", "settings.json")
	os.MkdirAll(filepath.Dir(settings), 0o755)
	const mine = `{"theme":"dark"}` + "\n"
	os.WriteFile(settings, []byte(mine), 0o644)
	clock := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	o := InstallOptions{Harness: ClaudeCode, Scope: "user", Home: home, Memory: filepath.Join(home, "mnt"), Mindmount: "/usr/local/bin/mindmount",
		Now: func() time.Time { clock = clock.Add(time.Minute); return clock }}
	var named []string
	for i, do := range []func(InstallOptions) ([]Change, error){Install, Uninstall, Install} {
		changes, err := do(o)
		if err != nil {
			t.Fatalf("run %d: %v", i, err)
		}
		for _, c := range changes {
			if c.Path == settings {
				named = append(named, c.Backup)
			}
		}
	}
	ents, _ := os.ReadDir(filepath.Dir(settings))
	var backups []string
	for _, e := range ents {
		if strings.Contains(e.Name(), backupMark) {
			backups = append(backups, e.Name())
		}
	}
	if len(backups) != 1 {
		t.Fatalf("backups %q, want one", backups)
	}
	if b, _ := os.ReadFile(filepath.Join(filepath.Dir(settings), backups[0])); string(b) != mine {
		t.Errorf("the backup holds %q, want the file before mindmount: %q", b, mine)
	}
	for _, n := range named {
		if filepath.Base(n) != backups[0] {
			t.Errorf("a run named the backup %q, want %s", n, backups[0])
		}
	}
}
