// Package harness connects coding-agent harnesses (Claude Code, Gemini CLI,
// Codex, OpenCode, or any agent run through "mindmount run") to a mindmount
// memory: it reads a harness's hook payload, renders the compiled context
// in the shape the harness expects, copies the new turns of the harness's
// session transcript into the memory's transcripts/ inbox for
// consolidation, and installs or removes mindmount's entries in each
// harness's own settings files without touching the user's.
//
// Hook is the whole of "mindmount hook EVENT" for a harness; the command
// only finds the memory. Everything a hook does is best effort: Hook says
// what went wrong, and the caller turns it into one line on stderr and
// exit status 0, because a hook must never block an agent's session.
package harness
