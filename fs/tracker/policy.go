package tracker

import (
	"errors"
	"fmt"
	"strings"

	"github.com/mindmount/mindmount/memgraph"
)

// The write policy: why a path may not change. It is the tracker's because
// the tracker is the repository's one writer and holds what the rule needs,
// the graph and HEAD (read_only is a property of the last commit); the
// facts it combines are memgraph's (IsSynthesized, IsMemoryPath,
// CheckName). Every door asks CanChange or CanCreate before it writes: the
// mount maps the errors to errnos (fs toErrno), MCP and the web page to
// messages and statuses. The tracker checks again when it commits (Judge,
// trackedRel, IsInbox): a refusal at a door is a courtesy, the commit is
// the rule.
var (
	// ErrGitDir: .git is readable for provenance, but only mindmount
	// writes history.
	ErrGitDir = errors.New(".git is written by mindmount only")
	// ErrCursor: the consolidation cursor moves only with the memories
	// it accounts for; an agent that wrote it could hide transcripts
	// from review.
	ErrCursor = errors.New(memgraph.CursorFile + " is written by consolidation only")
	// ErrSynthesized: the file is made up by mindmount (an index,
	// CONTEXT.md, .mindmount/status, search, consolidate).
	ErrSynthesized = errors.New("the file is synthesized by mindmount")
	// ErrReadOnly: the memory is read_only: true in the last commit.
	ErrReadOnly = errors.New("the memory is read_only: true in the last commit")
	// ErrInbox: transcripts/ is consolidation's inbox, never committed;
	// memory tools do not write there.
	ErrInbox = errors.New("transcripts/ is the consolidation inbox, not a memory")
	// ErrNotMemory: memory tools write memory files only (memgraph.IsMemoryPath).
	ErrNotMemory = errors.New("not a memory file")
	// ErrBadName: a new name breaks memgraph.CheckName (a control
	// character). A name holding a secret is memgraph.ErrSecretName as
	// well as this.
	ErrBadName = errors.New("file name not allowed")
)

// Scope is what a door may write.
type Scope int

const (
	// AnyFile: the mount and watch mode, where any file of the tree may be
	// written (transcripts included; the tracker never commits those).
	AnyFile Scope = iota
	// MemoryFile: memory tools (MCP, the web page) write memory files only.
	MemoryFile
)

// CanChange says why the content of rel may not change (write, truncate,
// rename, remove) through a door of scope, or nil. rel is a clean
// repository path. A read_only memory is looked up in the graph first (one
// map lookup on every write), then confirmed in HEAD, so a new file written
// with read_only: true, never committed, can still be fixed or removed. A
// HEAD that cannot be read keeps the protection.
func (t *Tracker) CanChange(rel string, scope Scope) error {
	if err := pathPolicy(rel, scope); err != nil {
		return err
	}
	if !t.g.ReadOnly(rel) {
		return nil
	}
	prev, ok, err := t.r.ReadHead(rel)
	switch {
	case err != nil:
		return fmt.Errorf("%w (the last commit cannot be read: %v)", ErrReadOnly, err)
	case ok && committedReadOnly(rel, prev):
		return ErrReadOnly
	}
	return nil
}

// CanCreate says why rel may not be created through a door of scope, or
// nil: CanChange's rules plus the name rule (memgraph.CheckName), which
// only new names must keep (a badly named file can still be fixed or
// removed).
func (t *Tracker) CanCreate(rel string, scope Scope) error {
	if err := t.CanChange(rel, scope); err != nil {
		return err
	}
	if err := memgraph.CheckName(rel); err != nil {
		return fmt.Errorf("%w: %w", ErrBadName, err)
	}
	return nil
}

// pathPolicy is the part of the policy that needs neither HEAD nor the
// graph: what the path is.
func pathPolicy(rel string, scope Scope) error {
	switch {
	case rel == ".git" || strings.HasPrefix(rel, ".git/"):
		return ErrGitDir
	case rel == memgraph.CursorFile:
		return ErrCursor
	case memgraph.IsSynthesized(rel):
		return ErrSynthesized
	case scope == MemoryFile && (rel == memgraph.TranscriptsDir || strings.HasPrefix(rel, memgraph.TranscriptsDir+"/")):
		return ErrInbox
	case scope == MemoryFile && !memgraph.IsMemoryPath(rel):
		return ErrNotMemory
	}
	return nil
}

// committedReadOnly reports whether prev, the committed version of rel,
// has read_only: true: the one home of the read_only-in-HEAD rule.
func committedReadOnly(rel string, prev []byte) bool {
	m, _ := memgraph.Parse(rel, prev)
	return m != nil && m.Front.ReadOnly
}
