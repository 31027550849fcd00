// Package migrate reads the layouts of other memory systems and says how
// to turn them into a mindmount repository: which files to write and which
// to remove, as one set of changes a caller commits. It reads through an
// fs.FS (the caller passes os.Root's, so no symlink leads out of the tree)
// and writes nothing itself.
//
// Formats: viral-git-agent-memory's repositories (Viral), Claude Code's
// file memory (ClaudeCode) and a Letta MemFS folder (Letta).
package migrate
