package gitrepo

import (
	"cmp"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
)

// ErrNoCommits is returned by LastCommit on a repository without commits.
var ErrNoCommits = errors.New("no commits yet")

// Head returns the commit HEAD points to, or "" on an unborn branch.
func (r *Repo) Head() (string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	h, err := r.readHeadRef()
	if err != nil || h.commit.IsZero() {
		return "", err
	}
	return h.commit.String(), nil
}

// ReadHead returns the committed content of rel at HEAD. ok is false when
// HEAD has no file there (or no commit yet).
func (r *Repo) ReadHead(rel string) (data []byte, ok bool, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	e, ok, err := r.headFile(rel)
	if err != nil || !ok {
		return nil, false, err
	}
	b, err := r.readObject(plumbing.BlobObject, e.hash)
	if err != nil {
		return nil, false, err
	}
	return b, true, nil
}

// HeadExec reports whether HEAD has a regular file at rel and whether it is
// executable (mode 100755). The change tracker uses it to commit a chmod
// that left the content alone.
func (r *Repo) HeadExec(rel string) (exec, ok bool, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	e, ok, err := r.headFile(rel)
	if err != nil || !ok {
		return false, false, err
	}
	return e.mode == modeExec, true, nil
}

// HeadFiles lists the regular files (symlinks too, not submodules) that
// HEAD holds beneath the folder dir, as slash-separated paths from the
// repository's root, sorted; none when HEAD has no such folder.
func (r *Repo) HeadFiles(dir string) ([]string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	h, err := r.readHeadRef()
	if err != nil {
		return nil, err
	}
	e, ok, err := r.lookup(h.tree, dir)
	if err != nil || !ok || !e.isTree() {
		return nil, err
	}
	var out []string
	var walk func(prefix string, tree plumbing.Hash) error
	walk = func(prefix string, tree plumbing.Hash) error {
		entries, err := r.readTree(tree)
		if err != nil {
			return err
		}
		for _, e := range entries {
			switch {
			case e.isTree():
				if err := walk(prefix+e.name+"/", e.hash); err != nil {
					return err
				}
			case e.mode != modeGitlink:
				out = append(out, prefix+e.name)
			}
		}
		return nil
	}
	if err := walk(dir+"/", e.hash); err != nil {
		return nil, err
	}
	sort.Strings(out)
	return out, nil
}

// headFile looks up the file (not folder or submodule) at rel in HEAD's
// tree. Call with r.mu held.
func (r *Repo) headFile(rel string) (treeEntry, bool, error) {
	h, err := r.readHeadRef()
	if err != nil {
		return treeEntry{}, false, err
	}
	e, ok, err := r.lookup(h.tree, rel)
	if err != nil || !ok || e.isTree() || e.mode == modeGitlink {
		return treeEntry{}, false, err
	}
	return e, true, nil
}

// LastCommit describes the commit HEAD points to; ErrNoCommits before the
// first commit.
func (r *Repo) LastCommit() (CommitInfo, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	h, err := r.readHeadRef()
	if err != nil {
		return CommitInfo{}, err
	}
	if h.commit.IsZero() {
		return CommitInfo{}, ErrNoCommits
	}
	b, err := r.readObject(plumbing.CommitObject, h.commit)
	if err != nil {
		return CommitInfo{}, err
	}
	info := parseCommit(string(b))
	info.Hash = h.commit.String()
	return info, nil
}

// parseCommit reads the author and subject of a raw commit object.
func parseCommit(s string) CommitInfo {
	var info CommitInfo
	hdr, body, _ := strings.Cut(s, "\n\n")
	for _, line := range strings.Split(hdr, "\n") {
		if rest, ok := strings.CutPrefix(line, "author "); ok {
			info.Author, info.When = parseIdent(rest)
		}
	}
	info.Subject = Subject(body)
	return info
}

// parseIdent reads "Name <email> 1700000000 +0100".
func parseIdent(s string) (Author, time.Time) {
	var a Author
	lt, gt := strings.IndexByte(s, '<'), strings.LastIndexByte(s, '>')
	if lt < 0 || gt < lt {
		return Author{Name: strings.TrimSpace(s)}, time.Time{}
	}
	a.Name = strings.TrimSpace(s[:lt])
	a.Email = s[lt+1 : gt]
	f := strings.Fields(s[gt+1:])
	if len(f) == 0 {
		return a, time.Time{}
	}
	sec, err := strconv.ParseInt(f[0], 10, 64)
	if err != nil {
		return a, time.Time{}
	}
	when := time.Unix(sec, 0)
	if len(f) > 1 && len(f[1]) == 5 {
		hh, _ := strconv.Atoi(f[1][1:3])
		mm, _ := strconv.Atoi(f[1][3:5])
		off := hh*3600 + mm*60
		if f[1][0] == '-' {
			off = -off
		}
		when = when.In(time.FixedZone(f[1], off))
	}
	return a, when
}

// Changed lists the files (repo-relative paths) that differ between two
// commits: added, modified, removed or changed mode. fromCommit "" means
// the empty tree; toCommit "" means HEAD. Unchanged subtrees are skipped
// by hash, so the cost follows the size of the difference.
func (r *Repo) Changed(fromCommit, toCommit string) ([]string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	from, err := r.treeOf(fromCommit, false)
	if err != nil {
		return nil, err
	}
	to, err := r.treeOf(toCommit, true)
	if err != nil {
		return nil, err
	}
	var out []string
	if err := r.diffTrees(from, to, "", &out); err != nil {
		return nil, err
	}
	sort.Strings(out)
	return out, nil
}

// treeOf returns the root tree of a commit ("" means HEAD when head is
// true, the empty tree otherwise).
func (r *Repo) treeOf(commit string, head bool) (plumbing.Hash, error) {
	if commit == "" {
		if !head {
			return plumbing.ZeroHash, nil
		}
		h, err := r.readHeadRef()
		return h.tree, err
	}
	if !plumbing.IsHash(commit) {
		return plumbing.ZeroHash, fmt.Errorf("not a commit hash: %q", commit)
	}
	b, err := r.readObject(plumbing.CommitObject, plumbing.NewHash(commit))
	if err != nil {
		return plumbing.ZeroHash, err
	}
	tree, ok := strings.CutPrefix(string(b), "tree ")
	if !ok || len(tree) < 40 {
		return plumbing.ZeroHash, fmt.Errorf("commit %s: no tree", commit)
	}
	return plumbing.NewHash(tree[:40]), nil
}

func (r *Repo) diffTrees(a, b plumbing.Hash, prefix string, out *[]string) error {
	if a == b {
		return nil
	}
	var ea, eb []treeEntry
	var err error
	if !a.IsZero() {
		if ea, err = r.readTree(a); err != nil {
			return err
		}
	}
	if !b.IsZero() {
		if eb, err = r.readTree(b); err != nil {
			return err
		}
	}
	ma := make(map[string]treeEntry, len(ea))
	for _, e := range ea {
		ma[e.name] = e
	}
	seen := make(map[string]bool, len(eb))
	for _, y := range eb {
		seen[y.name] = true
		x, ok := ma[y.name]
		if ok && x == y {
			continue
		}
		if err := r.diffEntry(x, ok, y, true, prefix, out); err != nil {
			return err
		}
	}
	for _, x := range ea {
		if !seen[x.name] {
			if err := r.diffEntry(x, true, treeEntry{}, false, prefix, out); err != nil {
				return err
			}
		}
	}
	return nil
}

// diffEntry reports the files of one name that differ between two trees.
func (r *Repo) diffEntry(x treeEntry, hasX bool, y treeEntry, hasY bool, prefix string, out *[]string) error {
	p := prefix + cmp.Or(x.name, y.name)
	var subA, subB plumbing.Hash
	if hasX && x.isTree() {
		subA = x.hash
	}
	if hasY && y.isTree() {
		subB = y.hash
	}
	if !subA.IsZero() || !subB.IsZero() {
		if err := r.diffTrees(subA, subB, p+"/", out); err != nil {
			return err
		}
	}
	if hasX && !x.isTree() || hasY && !y.isTree() {
		*out = append(*out, p)
	}
	return nil
}

// headFiles flattens the HEAD tree into path -> entry (files only) and the
// set of directories holding them.
func (r *Repo) headFiles(root plumbing.Hash) (map[string]treeEntry, map[string]bool, error) {
	files := map[string]treeEntry{}
	dirs := map[string]bool{}
	var walk func(id plumbing.Hash, prefix string) error
	walk = func(id plumbing.Hash, prefix string) error {
		entries, err := r.readTree(id)
		if err != nil {
			return err
		}
		for _, e := range entries {
			if e.isTree() {
				dirs[prefix+e.name] = true
				if err := walk(e.hash, prefix+e.name+"/"); err != nil {
					return err
				}
				continue
			}
			files[prefix+e.name] = e
		}
		return nil
	}
	if root.IsZero() {
		return files, dirs, nil
	}
	return files, dirs, walk(root, "")
}

// ReadBase returns rel as c's changes find it: in the tree of c.Parents[0]
// when c names one, else of the tip of c.Branch (HEAD's branch when
// empty). ok is false when that tree has no file there; link reports a
// symbolic link (data is then its target).
func (r *Repo) ReadBase(c Commit, rel string) (data []byte, ok, link bool, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var tree plumbing.Hash
	switch {
	case len(c.Parents) > 0:
		tree, err = r.treeOf(c.Parents[0], false)
	case c.Branch != "":
		var h head
		h, err = r.readRef(plumbing.NewBranchReferenceName(c.Branch))
		tree = h.tree
	default:
		var h head
		h, err = r.readHeadRef()
		tree = h.tree
	}
	if err != nil {
		return nil, false, false, err
	}
	e, ok, err := r.lookup(tree, rel)
	if err != nil || !ok || e.isTree() || e.mode == modeGitlink {
		return nil, false, false, err
	}
	b, err := r.readObject(plumbing.BlobObject, e.hash)
	if err != nil {
		return nil, false, false, err
	}
	return b, true, e.mode == modeSymlink, nil
}

// Recent describes at most n commits of HEAD's first-parent chain, newest
// first (a team's timeline on a member's page). It reads objects only.
func (r *Repo) Recent(n int) ([]CommitInfo, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	h, err := r.readHeadRef()
	if err != nil {
		return nil, err
	}
	var out []CommitInfo
	for c := h.commit; !c.IsZero() && len(out) < n; {
		b, err := r.readObject(plumbing.CommitObject, c)
		if err != nil {
			return out, err
		}
		info := parseCommit(string(b))
		info.Hash = c.String()
		out = append(out, info)
		c = firstParent(b)
	}
	return out, nil
}

// firstParent is a raw commit object's first parent (zero: none).
func firstParent(b []byte) plumbing.Hash {
	hdr, _, _ := strings.Cut(string(b), "\n\n")
	for _, line := range strings.Split(hdr, "\n") {
		if rest, ok := strings.CutPrefix(line, "parent "); ok {
			return plumbing.NewHash(strings.TrimSpace(rest))
		}
	}
	return plumbing.ZeroHash
}
