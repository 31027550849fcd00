// Package engram is a git-native memory for AI agents: every user owns a git
// repository of markdown memories, projected into a directory with FUSE,
// where every change becomes a commit. This file only explains how the
// packages layer; the code lives below it.
//
// Imports read downward. A package may import those on the lines below its
// own, never one above:
//
//	cmd/engram                 the CLI: flags, environment, signals, wiring
//	cmd/engram/httpapi         the HTTP API of "engram serve --http"
//	cmd/engram/mcpserver       MCP tools and resources over stdio and HTTP
//	cmd/engram/host            running repositories: one Runtime per repository
//	                           (graph, tracker, consolidator, sync), a Host of
//	                           every user's Runtime under ROOT, loaded lazily
//	fs                         the mount, single- and multi-user (the only
//	                           importer of go-fuse)
//	hooks/harness              agent-harness hooks (Claude Code, Codex, ...)
//	hooks/remote               sync with a git remote, GitHub setup
//	hooks                      git-side safety: pre-commit, merge drivers
//	consolidate                the dreamer: transcripts to memories
//	consolidate/llm            model providers (Ollama, OpenAI, Anthropic),
//	                           streaming chat, the fair pool of model calls
//	memgraph/tracker           the write pipeline: debounce, judge, commit
//	memgraph                   the memory model: format, validation, names,
//	                           ranking, indexes, context, settings, the graph
//	memgraph/recall            keyword and vector recall
//	memgraph/gitrepo           the git mechanism: objects, trees, index, refs,
//	                           locks, packing, crash repair
//	memgraph/secret            secret detection and redaction (gitleaks' rules)
//	memgraph/failpoint         named crash points for fault-injection tests
//	template                   the skeleton of a new repository
//
// Test helpers that no implementation owns sit beside what they test:
// consolidate/llmtest (a fake model server), memgraph/tracker/conformance
// (the behaviours every way of serving a repository must have, run over
// the mount and watch mode), memgraph/secret/secrettest (scans a repository
// and its git objects for planted secrets). scripts/ holds tooling: the
// demo, benchmarks, the soak test, scripts/fakellm (the fake model server
// as a program) and the systemd unit.
//
// Who writes: every commit of a repository goes through its one tracker
// (memgraph/tracker), which serializes the mount's writes, consolidation,
// sync merges and MCP edits and names the writer in the commit; gitrepo is
// the mechanism the tracker uses, never a second writer. The domain
// (memgraph, consolidate) never imports go-fuse, never reads the environment
// and never talks HTTP except through a provider handed to it.
package engram
