// Package mcpserver serves one mindmount repository over the Model Context
// Protocol, for agents that have no shell and no mount (desktop
// assistants, IDE agents, hosted harnesses). Its tools follow the
// file-oriented memory tool models are trained on (view, create,
// str_replace, insert, delete, rename) plus recall, context and use; the
// indexes and CONTEXT.md are resources with change notifications.
//
// Every write keeps the mount's guarantees: the new content is validated
// against HEAD before anything touches the disk (an invalid result is
// refused with the validator's "path:line: message"), read_only files are
// refused, paths are confined to the repository, and the change is
// committed through the repository's one tracker as one commit per tool
// call, authored "mcp (<client name>)".
//
// It is a front like the mount: it knows the domain (memgraph, tracker),
// never the reverse. cmd/mindmount runs it over stdio (mindmount mcp) and over
// streamable HTTP (mindmount serve --http, at /mcp).
package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mindmount/mindmount/fs/gitrepo"
	"github.com/mindmount/mindmount/fs/tracker"
	"github.com/mindmount/mindmount/memgraph"
	"github.com/mindmount/mindmount/serve/httpapi"
)

// Options configure a server. The zero value is usable.
type Options struct {
	// Logger receives warnings (nil: slog.Default()).
	Logger *slog.Logger
	// Version is reported to clients in the handshake ("" = "dev").
	Version string
	// MaxSessions bounds the MCP sessions over HTTP one repository has
	// open (default DefaultMaxSessions); a new one past it is answered
	// 429 until one ends (a DELETE, or sessionTimeout idle).
	MaxSessions int
}

// Repo is what a server needs of one repository: its graph, its tracker
// (the one writer) and its git repository. host.Runtime provides them.
type Repo struct {
	Graph   *memgraph.Graph
	Tracker *tracker.Tracker
	Git     *gitrepo.Repo
	// Listeners is the tracker's listener fan-out: the server hears of
	// changes there to notify subscribed clients.
	Listeners *tracker.Listeners
}

// server holds the tools' state for one repository.
type server struct {
	g    *memgraph.Graph
	tr   *tracker.Tracker
	r    *gitrepo.Repo
	tree tree
	log  *slog.Logger
	mcp  *mcp.Server
	res  *resources
}

// NewServer returns an MCP server for the repository. It listens to the
// tracker (repo.Listeners) for resource change notifications: build one per repository and
// share it between sessions (Handler does).
func NewServer(repo Repo, opts Options) *mcp.Server {
	return newServer(repo, opts).mcp
}

func newServer(repo Repo, opts Options) *server {
	log := opts.Logger
	if log == nil {
		log = slog.Default()
	}
	version := opts.Version
	if version == "" {
		version = "dev"
	}
	s := &server{g: repo.Graph, tr: repo.Tracker, r: repo.Git, tree: tree{t: repo.Git.Tree(), fileMode: repo.Git.NewFilePerm(), dirMode: repo.Git.NewDirPerm()}, log: log}
	s.res = newResources(s)
	s.mcp = mcp.NewServer(&mcp.Implementation{Name: "mindmount", Title: "mindmount memory", Version: version}, &mcp.ServerOptions{
		Instructions:       Instructions,
		Logger:             sdkLogger(log),
		SubscribeHandler:   s.res.subscribe,
		UnsubscribeHandler: s.res.unsubscribe,
		Capabilities:       &mcp.ServerCapabilities{},
	})
	s.addTools()
	s.res.register()
	repo.Listeners.Add(tracker.Listener{Changed: s.res.changed})
	return s
}

// Instructions tell a model how this memory works (the MCP `instructions`).
const Instructions = `This is your long-term memory, kept as markdown files in a git repository; every change you make is a commit.
- One fact per file: user_memory/<slug>.md for facts about the user, character_memory/<slug>.md for how to work with them. Start with view /memories, or read the resource CONTEXT.md.
- A memory file starts with frontmatter holding a one-line description, which is what indexes, context and recall show:
  ---
  description: Drinks green tea every morning
  status: active
  ---
  # Likes Tea

  ## Fact
  The user drinks green tea every morning.

  ## Access log
- Before answering from memory, use recall with a question; when a memory helped, call use on it (ranking depends on uses).
- Correct a memory with str_replace; retire a wrong one with delete (it becomes status: retracted and stays in history) rather than hard: true.
- Invalid files and read_only files are refused with a message naming the line to fix.`

// author is the commit author of a tool call: "mcp", with the client's
// name from the handshake when it gave one.
func author(req *mcp.CallToolRequest) (gitrepo.Author, string) {
	name := ""
	if req != nil {
		if ci := req.ClientInfo(); ci != nil {
			name = cleanClientName(ci.Name)
		}
	}
	label := "mcp"
	if name != "" {
		label = "mcp (" + name + ")"
	}
	return gitrepo.Writer(label), label
}

// cleanClientName keeps a client's self-chosen name safe for a commit
// author and a log line: letters, digits and . _ - only, other runs become
// one "-", at most 40 characters.
func cleanClientName(s string) string {
	var b strings.Builder
	dash := false
	for _, r := range s {
		ok := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-'
		switch {
		case ok:
			b.WriteRune(r)
			dash = false
		case !dash && b.Len() > 0:
			b.WriteByte('-')
			dash = true
		}
		if b.Len() >= 40 {
			break
		}
	}
	return strings.Trim(b.String(), "-.")
}

// commit runs one write through the tracker: fn validates and writes (it
// runs under the tracker's lock, so HEAD cannot move meanwhile), and the
// paths it reports become one commit by the calling client.
// A caller whose scope (httpapi.ScopeHeader, set by the HTTP front from
// its token) lacks write is refused before anything is read or written.
func (s *server) commit(ctx context.Context, req *mcp.CallToolRequest, fn func() (tracker.Edit, error)) (string, error) {
	if !mayWrite(req) {
		return "", errReadOnly
	}
	who, label := author(req)
	hash, err := s.tr.Write(ctx, who, label, fn)
	if err != nil {
		return "", err
	}
	return hash, nil
}

// errReadOnly refuses a writing tool to a read-only token.
var errReadOnly = errors.New("refused, nothing was written: this connection's token may only read (its scope has no write); use view, recall and context, or ask for a token with the write scope")

// mayWrite reports whether the call's caller may write: over HTTP the
// front says so in its scope header; over stdio there is no header and
// the caller owns the repository.
func mayWrite(req *mcp.CallToolRequest) bool {
	if req == nil || req.Extra == nil || req.Extra.Header == nil {
		return true
	}
	scope, named := httpapi.ScopeFromHeader(req.Extra.Header)
	return !named || scope.Has(httpapi.ScopeWrite)
}

// check asks the gate about data as the new content of rel, as the
// tracker will when it commits: refusals carry the gate's
// "path:line: message" lines.
func (s *server) check(rel string, data []byte) error {
	probs, err := s.tr.Ask(rel, data)
	if err != nil {
		return fmt.Errorf("read %s from HEAD: %w", rel, err)
	}
	if len(probs) == 0 {
		return nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "refused, nothing was written: the result would not be committed:\n")
	for _, p := range probs {
		b.WriteString("  " + p.String() + "\n")
	}
	b.WriteString("Fix the content and call the tool again.")
	if memgraph.KindOf(rel) == memgraph.KindUser || memgraph.KindOf(rel) == memgraph.KindCharacter {
		b.WriteString(" A memory file starts with ---, a line 'description: <one line>', optionally 'status: active', and ---.")
	}
	return fmt.Errorf("%s", b.String())
}

// done renders a write's result line with its commit.
func done(text, hash string) *mcp.CallToolResult {
	if hash != "" {
		text += " (commit " + gitrepo.ShortHash(hash) + ")"
	} else {
		text += " (unchanged, nothing to commit)"
	}
	return textResult(text)
}

func textResult(text string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}
}
