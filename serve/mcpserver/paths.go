package mcpserver

import (
	"errors"
	"fmt"
	"path"
	"strings"

	"github.com/mindmount/mindmount/fs/tracker"
	"github.com/mindmount/mindmount/memgraph"
)

// rootAlias is the root of the memory directory as the file-oriented memory
// tool models are trained on names it: "/memories/user_memory/x.md".
const rootAlias = "/memories"

// resolve turns a path argument into a clean repository-relative path ("."
// for the root). It is the first of two fences: it refuses `..`, `.git` and
// absolute paths with a message a model can act on; mcp_files.go's openat2
// calls are the second, against symlinks and anything this one missed.
func resolve(p string) (string, error) {
	orig := p
	p = strings.TrimSpace(p)
	switch {
	case p == "":
		return "", errors.New("path is empty; give a path relative to the memory root, e.g. user_memory/likes-tea.md (or /memories/user_memory/likes-tea.md)")
	case p == rootAlias || p == rootAlias+"/":
		return ".", nil
	case strings.HasPrefix(p, rootAlias+"/"):
		// "/memories//x" names x: the extra slashes are the root's, never
		// the file system's root.
		p = strings.TrimLeft(strings.TrimPrefix(p, rootAlias+"/"), "/")
		if p == "" {
			return ".", nil
		}
	case strings.HasPrefix(p, "/"):
		return "", fmt.Errorf("path %q is absolute; give a path relative to the memory root, e.g. user_memory/likes-tea.md, or start it with /memories/", orig)
	}
	if strings.ContainsRune(p, 0) || strings.Contains(p, "\\") {
		return "", fmt.Errorf("path %q holds a NUL or a backslash; use plain slash-separated names", orig)
	}
	for _, el := range strings.Split(p, "/") {
		if el == ".." {
			return "", fmt.Errorf("path %q uses `..`; memory paths stay inside the memory root", orig)
		}
		if strings.EqualFold(el, ".git") {
			return "", fmt.Errorf("path %q is inside .git, which memory tools never touch; change memories, and git records them", orig)
		}
	}
	p = path.Clean(p)
	if p == "" {
		p = "."
	}
	return p, nil
}

// writable resolves p and checks that a tool may change it: the write
// policy (tracker.CanChange) for a memory file (*.md, not hidden, not
// synthesized, not a transcript, not read_only). The tools check again
// under the tracker's lock (canChange) before they write.
func (s *server) writable(p string) (string, error) {
	rel, err := resolve(p)
	if err != nil {
		return "", err
	}
	if rel == "." {
		return "", errors.New("path is the memory root; name a file such as user_memory/likes-tea.md")
	}
	return rel, s.canChange(rel)
}

// canChange asks the write policy whether a tool may change rel.
func (s *server) canChange(rel string) error {
	return refusal(rel, s.tr.CanChange(rel, tracker.MemoryFile))
}

// canCreate asks the write policy whether a tool may create rel (a new
// name must also keep the name rule).
func (s *server) canCreate(rel string) error {
	return refusal(rel, s.tr.CanCreate(rel, tracker.MemoryFile))
}

// refusal words a write-policy refusal for a model, keeping the typed
// error for errors.Is.
func refusal(rel string, err error) error {
	var msg string
	switch {
	case err == nil:
		return nil
	case errors.Is(err, tracker.ErrReadOnly):
		msg = "refused: " + rel + " is read_only: true, so memory tools may not change, rename or delete it; a person changes it with git"
	case errors.Is(err, tracker.ErrSynthesized):
		msg = rel + " is generated from the memory files and cannot be written; change the memories under user_memory/ or character_memory/ instead"
	case errors.Is(err, tracker.ErrInbox), errors.Is(err, tracker.ErrNotMemory):
		msg = rel + " is not a memory file; memory tools write markdown files (*.md) outside hidden folders and transcripts/, e.g. user_memory/<slug>.md"
	case errors.Is(err, tracker.ErrGitDir):
		msg = rel + " is inside .git, which memory tools never touch; change memories, and git records them"
	case errors.Is(err, tracker.ErrCursor):
		msg = rel + " is the consolidation cursor, written by consolidation only; memory tools never touch it"
	case errors.Is(err, tracker.ErrBadName):
		// CheckName's words, which never repeat a secret the name holds.
		msg = "refused: " + memgraph.ErrorLine(err.Error())
	default:
		return err
	}
	return &refusedError{msg: msg, err: err}
}

// refusedError is a write-policy refusal in a model's words.
type refusedError struct {
	msg string
	err error
}

func (e *refusedError) Error() string { return e.msg }
func (e *refusedError) Unwrap() error { return e.err }

// shown is how a path is named in tool results: as the model gave it,
// under /memories when it used the alias.
func shown(rel string) string {
	if rel == "." {
		return rootAlias
	}
	return rootAlias + "/" + rel
}
