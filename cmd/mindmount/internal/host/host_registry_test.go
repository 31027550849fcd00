package host

import "testing"

// TestRootOf: a worker finds its ROOT from its repository's path, as
// UserDir made it.
func TestRootOf(t *testing.T) {
	for _, root := range []string{"/srv/mindmount", "/tmp/r", "relative/root"} {
		if got := RootOf(UserDir(root, "alice")); got != root {
			t.Errorf("RootOf(UserDir(%q, alice)) = %q", root, got)
		}
	}
}
