package host

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCheckUpgraded(t *testing.T) {
	tests := []struct {
		name  string
		setup func(dir string) error
		stale bool
	}{
		{"today's layout", func(dir string) error { return os.Mkdir(filepath.Join(dir, ".mindmount"), 0o755) }, false},
		{"nothing at all", func(string) error { return nil }, false},
		{"the old folder", func(dir string) error { return os.Mkdir(filepath.Join(dir, LegacyStateDir), 0o755) }, true},
		{"both", func(dir string) error {
			os.Mkdir(filepath.Join(dir, ".mindmount"), 0o755)
			return os.Mkdir(filepath.Join(dir, LegacyStateDir), 0o755)
		}, true},
		{"a link of the old name", func(dir string) error { return os.Symlink("/nowhere", filepath.Join(dir, LegacyStateDir)) }, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := tt.setup(dir); err != nil {
				t.Fatal(err)
			}
			err := CheckUpgraded(dir)
			if errors.Is(err, ErrNotUpgraded) != tt.stale {
				t.Fatalf("CheckUpgraded = %v, want stale %v", err, tt.stale)
			}
			if tt.stale && !strings.Contains(err.Error(), `"mindmount init `+dir+`"`) {
				t.Errorf("the error does not say how to fix it: %v", err)
			}
		})
	}
}
