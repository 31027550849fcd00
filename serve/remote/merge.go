package remote

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"path"
	"sort"
	"strings"

	"github.com/go-git/go-git/v5/plumbing/filemode"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/mindmount/mindmount/fs/gitrepo"
	"github.com/mindmount/mindmount/fs/tracker"
	"github.com/mindmount/mindmount/hooks"
	"github.com/mindmount/mindmount/memgraph"
)

// plan is what a sync must do to bring the remote's commits in.
type plan struct {
	upToDate bool           // theirs is already in ours
	commit   tracker.Change // Parents: ours ("" when unborn), theirs
	siblings []string       // retired siblings written by the merge
}

// planMerge computes the merge of theirs into ours: nothing, a
// fast-forward, or one merge commit whose tree merges every file changed
// on both sides with the hooks drivers.
func planMerge(repo *git.Repository, ours, theirs plumbing.Hash) (plan, error) {
	var p plan
	tc, err := repo.CommitObject(theirs)
	if err != nil {
		return p, err
	}
	ttree, err := tc.Tree()
	if err != nil {
		return p, err
	}
	// The merge's files go into the work tree, never over an
	// uncommitted edit (gitrepo.ErrDirty).
	p.commit.Worktree, p.commit.Clean = true, true
	p.commit.Parents = []string{"", theirs.String()}
	var ourTree *object.Tree
	if !ours.IsZero() {
		if oc, err := repo.CommitObject(ours); err == nil {
			ourTree, _ = oc.Tree()
		}
	}
	if err := checkSizes(repo, ourTree, ttree); err != nil {
		return p, err
	}
	if ours.IsZero() { // nothing local yet: take the remote as it is
		p.commit.FastForward = true
		ch, err := treeChanges(nil, ttree)
		p.commit.Changes = ch
		return p, err
	}
	p.commit.Parents[0] = ours.String()
	if ours == theirs {
		p.upToDate = true
		return p, nil
	}
	oc, err := repo.CommitObject(ours)
	if err != nil {
		return p, err
	}
	otree, err := oc.Tree()
	if err != nil {
		return p, err
	}
	bases, err := oc.MergeBase(tc)
	if err != nil {
		return p, err
	}
	var btree *object.Tree
	if len(bases) > 0 {
		switch bases[0].Hash {
		case theirs:
			p.upToDate = true
			return p, nil
		case ours:
			p.commit.FastForward = true
			ch, err := treeChanges(otree, ttree)
			p.commit.Changes = ch
			return p, err
		}
		if btree, err = bases[0].Tree(); err != nil {
			return p, err
		}
	}
	m := &merger{o: otree, t: ttree, b: btree, theirsNewer: tc.Committer.When.After(oc.Committer.When), used: map[string]bool{}}
	if err := m.run(); err != nil {
		return p, err
	}
	p.commit.Changes = m.changes
	p.siblings = m.siblings
	p.commit.Message = mergeMessage(m)
	return p, nil
}

// MaxBlob is the largest file a sync takes from a remote (50 MiB): a
// memory is at most 64 KiB, and a merged file is read whole into the
// worker's memory. A fetch refuses a larger object as the pack streams in
// (sync_fetch.go); the merge refuses one already in the repository.
var MaxBlob int64 = 50 << 20

// ErrBlobTooLarge means the remote holds a file larger than MaxBlob; the
// sync merges nothing until it is gone.
var ErrBlobTooLarge = errors.New("a file on the remote is larger than a sync takes")

// objectSizer reads an object's size from its header, without its content
// (go-git's filesystem storage).
type objectSizer interface {
	EncodedObjectSize(h plumbing.Hash) (int64, error)
}

// checkSizes refuses a merge that would bring a file larger than MaxBlob
// from theirs: before any content is read, from the objects' headers.
func checkSizes(repo *git.Repository, ours, theirs *object.Tree) error {
	sz, ok := repo.Storer.(objectSizer)
	if !ok {
		return nil
	}
	diff, err := object.DiffTree(ours, theirs)
	if err != nil {
		return err
	}
	for _, c := range diff {
		if c.To.Name == "" || c.To.TreeEntry.Mode == filemode.Submodule {
			continue
		}
		n, err := sz.EncodedObjectSize(c.To.TreeEntry.Hash)
		if err != nil {
			return err
		}
		if n > MaxBlob {
			return fmt.Errorf("%w: %s is %s on the remote, more than the %s a sync takes; nothing was merged — remove or shrink it there", ErrBlobTooLarge, memgraph.SafeLine(c.To.Name), sizeText(n), sizeText(MaxBlob))
		}
	}
	return nil
}

// treeChanges lists the changes that turn tree a (nil: empty) into b.
func treeChanges(a, b *object.Tree) ([]gitrepo.Change, error) {
	diff, err := object.DiffTree(a, b)
	if err != nil {
		return nil, err
	}
	var out []gitrepo.Change
	for _, c := range diff {
		if c.To.Name == "" {
			out = append(out, gitrepo.Change{Path: c.From.Name, Delete: true})
			continue
		}
		data, err := fileData(b, c.To.Name)
		if err != nil {
			return nil, err
		}
		out = append(out, gitrepo.Change{Path: c.To.Name, Data: data, Exec: c.To.TreeEntry.Mode == 0o100755})
	}
	return out, nil
}

// merger merges trees o (ours) and t (theirs) over base b (nil: none).
type merger struct {
	o, t, b     *object.Tree
	theirsNewer bool
	used        map[string]bool // paths the merge writes
	changes     []gitrepo.Change
	siblings    []string
	fromRemote  int
}

func (m *merger) run() error {
	ourSide, err := changedPaths(m.b, m.o)
	if err != nil {
		return err
	}
	theirSide, err := changedPaths(m.b, m.t)
	if err != nil {
		return err
	}
	paths := make([]string, 0, len(theirSide))
	for p := range theirSide {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		m.used[p] = true
	}
	for _, p := range paths {
		tv, err := fileOrNil(m.t, p)
		if err != nil {
			return err
		}
		if !ourSide[p] { // only theirs changed it
			m.fromRemote++
			m.changes = append(m.changes, change(p, tv))
			continue
		}
		ov, err := fileOrNil(m.o, p)
		if err != nil {
			return err
		}
		bv, err := fileOrNil(m.b, p)
		if err != nil {
			return err
		}
		if err := m.both(p, bv, ov, tv); err != nil {
			return err
		}
	}
	return nil
}

// both merges a path changed on both sides with hooks.MergeFile; a text
// or binary file no rule merges keeps ours in place and theirs beside it,
// so no line is lost.
func (m *merger) both(p string, bv, ov, tv []byte) error {
	if bytes.Equal(ov, tv) && (ov == nil) == (tv == nil) {
		return nil
	}
	m.fromRemote++
	res, err := hooks.MergeFile(hooks.MergeInput{
		Path: p, Base: bv, Ours: ov, Theirs: tv, TheirsNewer: m.theirsNewer, Taken: m.taken,
	})
	var ce *hooks.ConflictError
	switch {
	case errors.As(err, &ce) && (ce.Rule == hooks.RuleLines || ce.Rule == hooks.RuleBinary):
		m.keepBeside(p, tv)
		return nil
	case err != nil: // a cursor that does not parse stops the sync
		return err
	case res.Deleted:
		m.set(p, ov, nil)
		return nil
	}
	m.set(p, ov, res.Data)
	if res.Sibling != nil {
		m.used[res.SiblingPath] = true
		m.siblings = append(m.siblings, res.SiblingPath)
		m.changes = append(m.changes, gitrepo.Change{Path: res.SiblingPath, Data: res.Sibling})
	}
	return nil
}

// keepBeside writes theirs of p beside ours, as p's name with ".remote"
// before the extension (numbered when taken).
func (m *merger) keepBeside(p string, tv []byte) {
	ext := path.Ext(p)
	stem := strings.TrimSuffix(p, ext)
	sib := stem + ".remote" + ext
	for n := 2; m.taken(sib); n++ {
		sib = fmt.Sprintf("%s.remote-%d%s", stem, n, ext)
	}
	m.used[sib] = true
	m.siblings = append(m.siblings, sib)
	m.changes = append(m.changes, gitrepo.Change{Path: sib, Data: tv})
}

// set records the merged content of p when it differs from ours.
func (m *merger) set(p string, ov, out []byte) {
	if out == nil {
		if ov != nil {
			m.changes = append(m.changes, gitrepo.Change{Path: p, Delete: true})
		}
		return
	}
	if ov == nil || !bytes.Equal(ov, out) {
		m.changes = append(m.changes, gitrepo.Change{Path: p, Data: out})
	}
}

// taken reports whether a path exists on either side or is written.
func (m *merger) taken(p string) bool {
	if m.used[p] {
		return true
	}
	for _, t := range []*object.Tree{m.o, m.t} {
		if _, err := t.FindEntry(p); err == nil {
			return true
		}
	}
	return false
}

func change(p string, data []byte) gitrepo.Change {
	if data == nil {
		return gitrepo.Change{Path: p, Delete: true}
	}
	return gitrepo.Change{Path: p, Data: data}
}

// changedPaths lists the files that differ between a (nil: empty) and b.
func changedPaths(a, b *object.Tree) (map[string]bool, error) {
	diff, err := object.DiffTree(a, b)
	if err != nil {
		return nil, err
	}
	out := map[string]bool{}
	for _, c := range diff {
		if c.From.Name != "" {
			out[c.From.Name] = true
		}
		if c.To.Name != "" {
			out[c.To.Name] = true
		}
	}
	return out, nil
}

func fileOrNil(t *object.Tree, p string) ([]byte, error) {
	if t == nil {
		return nil, nil
	}
	if _, err := t.FindEntry(p); err != nil {
		return nil, nil
	}
	return fileData(t, p)
}

func fileData(t *object.Tree, p string) ([]byte, error) {
	f, err := t.File(p)
	if err != nil {
		return nil, err
	}
	rd, err := f.Reader()
	if err != nil {
		return nil, err
	}
	defer rd.Close()
	return io.ReadAll(rd)
}

func mergeMessage(m *merger) string {
	var b strings.Builder
	fmt.Fprintf(&b, "sync: merge %s (%d %s from the remote)\n", Name, m.fromRemote, memgraph.Plural(m.fromRemote, "file", "files"))
	if len(m.siblings) > 0 {
		b.WriteString("\nChanged on both sides; the other version is kept retired beside the newer:\n")
		for _, s := range m.siblings {
			b.WriteString("  " + s + "\n")
		}
	}
	return b.String()
}
