// Package hooks is what mindmount does inside plain git: the pre-commit
// validator (the daemon's rules, so a change committed with the git CLI in
// a clone is judged exactly like one written through the mount), the merge
// drivers for the consolidation cursor and for memory files (so two
// machines' histories, and remote sync in package serve/remote, merge
// without losing a line or leaving conflict markers), and installing both
// into a clone.
package hooks
