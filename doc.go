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
//	cmd/engram/host            running repositories: one Runtime per repository,
//	                           a Host of every user's Runtime, loaded lazily
//	fs                         the mount (the only importer of go-fuse)
//	hooks, hooks/harness,      git-side safety (pre-commit, merge drivers),
//	hooks/remote               agent-harness hooks, sync with a git remote
//	consolidate                the dreamer: transcripts to memories
//	consolidate/llm            model providers (Ollama, OpenAI, Anthropic), the
//	                           shared fair pool of model calls
//	memgraph/tracker           the write pipeline: debounce, validate, commit
//	memgraph                   the memory model: format, validation, ranking,
//	                           indexes, context, the in-memory graph
//	memgraph/recall            keyword and vector recall
//	memgraph/gitrepo           the git writer: objects, trees, index, refs
//	memgraph/secret            secret detection and redaction
//	memgraph/failpoint         named crash points for fault-injection tests
//	template                   the skeleton of a new repository
//
// Who writes: every commit of a repository goes through its one tracker
// (memgraph/tracker), which serializes the mount's writes, consolidation,
// sync merges and MCP edits and names the writer in the commit; gitrepo is
// the mechanism the tracker uses, never a second writer. The domain
// (memgraph, consolidate) never imports go-fuse, never reads the environment
// and never talks HTTP except through a provider handed to it.
package engram
