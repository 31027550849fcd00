// Package hooks is what mindmount does inside plain git: the pre-commit
// validator (the daemon's rules, so a change committed with the git CLI in
// a clone is judged exactly like one written through the mount), MergeFile,
// the one three-way merge of a repository's file with its rule per path
// (git's merge drivers for the cursor and memory files call it, as do
// sync, a dream's merge, a proposal's approval and the web page's revert,
// so two histories merge without losing a line), and installing the hook
// and drivers into a clone.
package hooks
