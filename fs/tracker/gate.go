package tracker

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	"github.com/mindmount/mindmount/fs/gitrepo"
	"github.com/mindmount/mindmount/memgraph"
	"github.com/mindmount/mindmount/template"
)

// The gate: the one function that decides whether a change of one path may
// be committed. Every door reaches it: a burst from the mount or watch mode
// and MCP's and HTTP's writes (the flush, Write), a change another writer
// prepared (Apply, Alone.Apply: consolidation, the web page, import, init,
// sync), a person's "git commit" (the pre-commit hook) and mindmount check.
// A door may ask it early to word its refusal before it writes anything;
// the commit asks it again, and that answer is the rule.

// Version is one side of a path's change as the gate sees it.
type Version struct {
	// Data is the content (a symbolic link's target; nil when the file
	// was too large to read, see Size).
	Data []byte
	// Exists is false for a path that is absent: before a new file, after
	// a deletion.
	Exists bool
	// Link: the path is a symbolic link.
	Link bool
	// Size is the size on disk of a file whose Data was not read because
	// it is larger than its kind allows (the size rule's limit,
	// memgraph.SizeLimit, for memories, skills and the settings file;
	// MaxFile for any other file); 0 otherwise.
	Size int64
}

// Door says who proposes a change. The rules differ by door only where
// Check says so.
type Door int

const (
	// DoorPrepared: a change prepared beside the tree and handed to
	// Apply: consolidation (the only writer of the cursor), the web
	// page, a sync's own commits, a promotion. The zero Door.
	DoorPrepared Door = iota
	// DoorTree: a write to the work tree — the mount, watch mode, a
	// person's editor, MCP and HTTP writes (Write), a person's git commit.
	DoorTree
	// DoorMerge: the result of merging two histories (a sync, a dream
	// merged back). Each side's content passed a gate when it was
	// committed and the memory merge validates what it writes, so only
	// the path rules apply: a merge never fails on the other side's
	// content.
	DoorMerge
	// DoorAudit: mindmount check over a whole tree: every secret in a
	// file counts, not only what a change adds.
	DoorAudit
	// DoorInit: mindmount init (and serve's provisioning) committing the
	// template: a new file exactly as the template makes it (the
	// read_only character.md) is mindmount's own and passes as it is.
	DoorInit
	// DoorImport: mindmount import, from another system's files: every
	// secret in a file counts (the files arrive whole, from outside); the
	// template's files pass as under DoorInit, and a file HEAD holds
	// exactly as the template made it is the import's to replace.
	DoorImport
)

// Rules are a repository's switches for the gate, from the operator's
// configuration (never the tracked tree), and the door asking.
type Rules struct {
	Door Door
	// CommitSecrets is the operator's commit_secrets: a secret in content
	// or a name is committed anyway.
	CommitSecrets bool
}

// MaxFile is the largest file committed: a larger one is held back with a
// problem that says so. (A memory is far smaller; this bounds what a
// write to the tree can make the daemon hold and hash.)
const MaxFile = maxPlainFile

// Sentinels of the gate's problems (memgraph.Problem.Err) besides
// ErrReadOnly, ErrSecret, ErrUnscanned, ErrInbox, ErrGitDir, ErrCursor,
// ErrSynthesized and ErrBadName.
var (
	// ErrSymlink: mindmount commits regular files only.
	ErrSymlink = errors.New("symbolic links are not committed")
	// ErrTooLarge: a file over MaxFile.
	ErrTooLarge = errors.New("file too large to commit")
	// ErrInvalid: the file breaks the memory format or a setting's rule
	// (memgraph.Validate).
	ErrInvalid = errors.New("invalid")
)

// Check is the gate: it returns why rel may not go from before to after in
// a commit, one problem per reason, each with its typed Err; none means
// the change may be committed. In order: the path (git can hold it; not
// .git, the inbox, a synthesized file, or the cursor outside a prepared
// change), the name of a new file (memgraph.CheckName), a secret in the
// name, a symbolic link, the size, the commit rules of memory and
// settings files (Judge: read_only in the last commit, then
// memgraph.Validate), and last the secrets the content adds (all of them
// under DoorAudit). A merge is held to the path rules only (DoorMerge).
func Check(rel string, after, before Version, r Rules) []memgraph.Problem {
	if p, ok := pathProblem(rel, r.Door, after.Exists); ok {
		return []memgraph.Problem{p}
	}
	if !after.Exists {
		if r.Door == DoorMerge {
			return nil
		}
		return judgedProblems(rel, after, before)
	}
	if r.Door != DoorMerge && !before.Exists {
		if err := memgraph.CheckName(rel); err != nil && !errors.Is(err, memgraph.ErrSecretName) {
			return []memgraph.Problem{{Path: memgraph.SafeLine(rel), Msg: err.Error(), Err: ErrBadName}}
		}
	}
	if !r.CommitSecrets {
		if ps := NameProblems(rel); ps != nil {
			return ps
		}
	}
	if after.Link {
		return []memgraph.Problem{SymlinkProblem(rel)}
	}
	if after.Size > MaxFile || int64(len(after.Data)) > MaxFile {
		return []memgraph.Problem{{Path: rel, Msg: fmt.Sprintf("file is larger than %d MiB and is not committed", MaxFile>>20), Err: ErrTooLarge}}
	}
	if r.Door == DoorMerge {
		return nil
	}
	if after.Size > 0 {
		// Not read: judged by its size alone, with the size rule's
		// own problem (the one Parse gives the bytes).
		if p, tooBig := memgraph.SizeProblem(rel, after.Size); tooBig {
			if p.Err == nil {
				p.Err = ErrInvalid
			}
			return []memgraph.Problem{p}
		}
	}
	if ps := judgedProblems(rel, after, before); len(ps) > 0 {
		return ps
	}
	whole := r.Door == DoorAudit || r.Door == DoorImport
	if r.CommitSecrets || before.Exists && !before.Link && bytes.Equal(before.Data, after.Data) && !whole {
		return nil
	}
	var prev []byte
	if before.Exists && !before.Link && !whole {
		prev = before.Data
	}
	return SecretProblems(rel, after.Data, prev)
}

// judgedProblems applies Judge to the files it covers (Judged), with the
// validator's problems marked ErrInvalid.
func judgedProblems(rel string, after, before Version) []memgraph.Problem {
	if !Judged(rel) {
		return nil
	}
	prev := before.Data
	if before.Exists && prev == nil {
		prev = []byte{} // an empty committed file is not a new one
	}
	inHead := before.Exists && !before.Link
	var ps []memgraph.Problem
	if inHead && after.Exists && bytes.Equal(prev, after.Data) {
		// No change of content (mindmount check over a committed
		// file): read_only has nothing to refuse; the file is still
		// held to the format.
		ps = memgraph.Validate(rel, after.Data, prev)
	} else {
		ps = Judge(rel, after.Data, after.Exists, prev, inHead)
	}
	for i := range ps {
		if ps[i].Err == nil {
			ps[i].Err = ErrInvalid
		}
	}
	return ps
}

// pathProblem applies the rules that need only the path, the door and
// whether the change leaves a file there (a synthesized file that a
// foreign layout committed may be removed).
func pathProblem(rel string, d Door, exists bool) (memgraph.Problem, bool) {
	if bad, _ := uncommittable(rel); bad != nil {
		msg := "not committed: " + strings.TrimPrefix(bad.Error(), "invalid path: ") + "; rename it"
		return memgraph.Problem{Path: quote(rel), Msg: msg, Err: ErrBadName}, true
	}
	var err error
	switch {
	case rel == ".git" || strings.HasPrefix(rel, ".git/"):
		err = ErrGitDir
	case IsInbox(rel):
		err = ErrInbox
	case memgraph.IsSynthesized(rel) && exists:
		err = ErrSynthesized
	case rel == memgraph.CursorFile && (d == DoorTree || d == DoorImport):
		err = ErrCursor
	default:
		return memgraph.Problem{}, false
	}
	return memgraph.Problem{Path: memgraph.SafeLine(rel), Msg: err.Error() + "; it is not committed", Err: err}, true
}

// RefusedError is a commit the gate refused: every problem of every path.
// errors.Is matches each problem's Err (ErrSecret, ErrReadOnly, ErrInvalid,
// ...), so a door maps it without reading its text.
type RefusedError struct {
	Problems []memgraph.Problem
}

func (e *RefusedError) Error() string {
	var b strings.Builder
	b.WriteString("not committed: ")
	for i, p := range e.Problems {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(p.String())
	}
	return b.String()
}

// Unwrap returns the problems' typed reasons.
func (e *RefusedError) Unwrap() []error {
	var out []error
	for _, p := range e.Problems {
		if p.Err != nil {
			out = append(out, p.Err)
		}
	}
	return out
}

// gate asks Check about every path c changes, against the tree c applies
// to (its first parent, or the tip of its branch); a refusal is a
// *RefusedError listing every problem, and nothing is recorded. A path
// whose content c leaves as it was is not asked (a read_only memory
// rewritten with its own bytes is no change of it). Moving a branch to a
// commit that exists (a fast-forward) or deleting one changes no content.
func gate(r *gitrepo.Repo, c Change, rules Rules) error {
	if c.FastForward || c.DeleteBranch {
		return nil
	}
	if len(c.Parents) > 1 {
		rules.Door = DoorMerge
	}
	last := make(map[string]gitrepo.Change, len(c.Changes))
	var order []string
	for _, ch := range c.Changes {
		if _, seen := last[ch.Path]; !seen {
			order = append(order, ch.Path)
		}
		last[ch.Path] = ch // the later change of a path wins, as in Record
	}
	var probs []memgraph.Problem
	for _, rel := range order {
		ch := last[rel]
		prev, ok, link, err := r.ReadBase(c, rel)
		if err != nil {
			return err
		}
		after := Version{Data: ch.Data, Exists: !ch.Delete}
		before := Version{Data: prev, Exists: ok, Link: link}
		if rules.Door == DoorInit || rules.Door == DoorImport {
			before = templateBase(rel, after, before, rules.Door)
		}
		if after.Exists == before.Exists && (!after.Exists || !link && bytes.Equal(prev, ch.Data)) {
			continue
		}
		probs = append(probs, Check(rel, after, before, rules)...)
	}
	if len(probs) > 0 {
		return &RefusedError{Problems: probs}
	}
	return nil
}

// templateBase is what the gate judges a change of init or import
// against: a new file exactly as the template makes it counts as
// unchanged (mindmount's own, read_only flag and all), and for an import
// a file HEAD holds exactly as the template made it counts as absent (the
// import's to replace).
func templateBase(rel string, after, before Version, d Door) Version {
	t, err := template.Render(rel, "")
	switch {
	case err != nil || before.Link:
		return before
	case !before.Exists && after.Exists && bytes.Equal(t, after.Data):
		return after
	case d == DoorImport && before.Exists && bytes.Equal(t, before.Data):
		return Version{}
	}
	return before
}

// Ask is the gate's answer to writing data at rel through the work tree,
// for a door that asks before it writes (an MCP edit): the Check the flush
// makes when it commits, against HEAD, with the operator's switches.
func (t *Tracker) Ask(rel string, data []byte) ([]memgraph.Problem, error) {
	prev, ok, err := t.r.ReadHead(rel)
	if err != nil {
		return nil, err
	}
	before := Version{Data: prev, Exists: ok}
	if err := t.sizeRoom(rel, int64(len(data))); err != nil {
		return []memgraph.Problem{{Path: memgraph.SafeLine(rel), Msg: err.Error(), Err: ErrTreeFull}}, nil
	}
	return Check(rel, Version{Data: data, Exists: true}, before, Rules{Door: DoorTree, CommitSecrets: t.commitSecrets()}), nil
}
