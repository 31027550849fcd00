package hooks

import "strings"

// What the build before the rename, then called engram, put into a clone:
// its pre-commit script, its block of .git/info/attributes and its merge
// drivers. Install and Uninstall treat them as their own, so one
// "mindmount hooks install" (which "mindmount init" runs) upgrades a clone.
const (
	legacyHookMarker = "# engram pre-commit hook"
	legacyAttrMarker = "# engram merge drivers"
)

var legacyDrivers = []string{"engram-cursor", "engram-memory"}

// isLegacyDriver reports whether a merge driver's command runs the old
// binary ("engram merge-memory …" or ".../engram merge-memory …").
func isLegacyDriver(command string) bool {
	bin, _, _ := strings.Cut(command, " ")
	return bin == "engram" || strings.HasSuffix(bin, "/engram")
}
