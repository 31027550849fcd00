package gitrepo

import (
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5/plumbing/format/gitignore"
	"github.com/go-git/go-git/v5/plumbing/format/index"
	"github.com/mindmount/mindmount/fs/gitrepo/failpoint"
)

// Ignored reports whether git ignores rel (repo-relative, '/'-separated;
// a trailing '/' asks about a directory). It honours .git/info/exclude, the
// root .gitignore and nested ones, and ignores a path inside an ignored
// directory. The patterns are cached; Commit reloads them when it commits a
// .gitignore, and ReloadIgnores does so on request.
func (r *Repo) Ignored(rel string) bool {
	isDir := strings.HasSuffix(rel, "/")
	rel = strings.Trim(rel, "/")
	if rel == "" {
		return false
	}
	parts := strings.Split(rel, "/")
	if parts[0] == ".git" {
		return true
	}
	m := r.matcher()
	for i := 1; i < len(parts); i++ {
		if m.Match(parts[:i], true) {
			return true
		}
	}
	return m.Match(parts, isDir)
}

// ReloadIgnores drops the cached ignore patterns; the next Ignored or Dirty
// reads them again. Call it when a .gitignore or .git/info/exclude changed
// outside Commit.
func (r *Repo) ReloadIgnores() {
	r.ignMu.Lock()
	r.ignore = nil
	r.ignMu.Unlock()
}

func (r *Repo) matcher() gitignore.Matcher {
	r.ignMu.RLock()
	m := r.ignore
	r.ignMu.RUnlock()
	if m != nil {
		return m
	}
	r.ignMu.Lock()
	defer r.ignMu.Unlock()
	if r.ignore == nil {
		// ReadPatterns reads .git/info/exclude and every .gitignore outside
		// ignored directories; unreadable files count as empty, like git.
		ps, _ := gitignore.ReadPatterns(osfs.New(r.dir), nil)
		r.ignore = gitignore.NewMatcher(ps)
	}
	return r.ignore
}

// Dirty returns the repo-relative paths whose work tree state differs from
// HEAD: new files that are not ignored, modified files (content or exec
// bit) and deleted files. It walks the whole work tree, trusting the index
// stat data where it is not racy and hashing the rest; it is meant for
// recovery at start, not for the commit path.
//
// A file it hashes and finds unchanged (its stat data went stale: a chown,
// a touch, a copy) gets fresh stat data in .git/index, as "git status"
// refreshes it, so the next start trusts it instead of hashing it again.
// Only the repository's writer does that — this process holds the daemon
// lock (LockDaemon) — and only when it takes index.lock at once and the
// index is still the one it read; otherwise the refresh is skipped, never
// waited for: a reader (mindmount index without a daemon, another user)
// never writes .git.
func (r *Repo) Dirty() ([]string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	h, err := r.readHeadRef()
	if err != nil {
		return nil, err
	}
	files, dirs, err := r.headFiles(h.tree)
	if err != nil {
		return nil, err
	}
	idx, err := r.idx.load()
	if err != nil {
		return nil, err
	}
	w := dirtyWalk{r: r, files: files, dirs: dirs, idx: idx, indexTime: r.idx.key.mtime,
		// A file modified in the second before the walk may be modified
		// again after its stat within the same timestamp tick: its stat
		// data is not stored (git's racy-clean rule, coarse clocks).
		cutoff: time.Now().Truncate(time.Second), seen: make(map[string]bool, len(files))}
	key := r.idx.key
	// The walk and every read go beneath the work tree by descriptor and
	// follow no link (subtree): a folder swapped for a link is not listed.
	if err := r.tree.WalkDir(".", w.visit); err != nil {
		return nil, err
	}
	for rel, e := range files {
		if !w.seen[rel] && e.mode != modeGitlink {
			w.out = append(w.out, rel)
		}
	}
	if len(w.fresh) > 0 && r.holdsDaemon() {
		r.refreshIndex(key, w.fresh)
	}
	sort.Strings(w.out)
	return w.out, nil
}

// dirtyWalk is one walk of Dirty.
type dirtyWalk struct {
	r         *Repo
	files     map[string]treeEntry
	dirs      map[string]bool
	idx       *index.Index
	indexTime time.Time
	cutoff    time.Time
	seen      map[string]bool
	out       []string
	fresh     map[string]fs.FileInfo // hashed, unchanged, stat data to store
}

func (w *dirtyWalk) visit(rel string, d fs.DirEntry, err error) error {
	if err != nil {
		if rel == "." {
			return err
		}
		return nil // vanished or unreadable: report what we can
	}
	if rel == "." {
		return nil
	}
	if d.IsDir() {
		if d.Name() == ".git" || (!w.dirs[rel] && w.r.Ignored(rel+"/")) {
			return filepath.SkipDir
		}
		return nil
	}
	e, tracked := w.files[rel]
	if !tracked {
		if (d.Type().IsRegular() || d.Type()&fs.ModeSymlink != 0) && !w.r.Ignored(rel) {
			w.out = append(w.out, rel)
		}
		return nil
	}
	w.seen[rel] = true
	fi, err := d.Info()
	if err != nil {
		w.out = append(w.out, rel)
		return nil
	}
	ie := getEntry(w.idx, rel)
	if ie != nil && ie.Hash == e.hash && uint32(ie.Mode) == e.mode && statClean(ie, fi) && ie.ModifiedAt.Before(w.indexTime) {
		return nil
	}
	if !w.r.sameContent(rel, fi, e) {
		w.out = append(w.out, rel)
		return nil
	}
	// fi was taken before the read: a write after it changes mtime and
	// ctime, so the stored stat data never vouches for newer content.
	if ie != nil && ie.Stage == 0 && fi.Mode().IsRegular() && fi.ModTime().Before(w.cutoff) {
		if w.fresh == nil {
			w.fresh = map[string]fs.FileInfo{}
		}
		w.fresh[rel] = fi
	}
	return nil
}

// refreshIndex stores the stat data of fresh in .git/index (as git
// replaces it: index.lock, then a rename), when the index is still the
// version key the walk compared against. A failure leaves the index as it
// was; the next Dirty hashes those files again. Call with r.mu held.
func (r *Repo) refreshIndex(key fileKey, fresh map[string]fs.FileInfo) {
	lock, err := r.createLock(r.idx.path+".lock", "index", os.O_RDWR)
	if err != nil {
		return // a git command holds the index: skip, do not wait
	}
	failpoint.Inject(failpoint.RefreshLocked)
	idx, err := r.idx.load()
	if err != nil || r.idx.key != key {
		r.unlockIndex(lock) // changed since the walk (a git command)
		return
	}
	for rel, fi := range fresh {
		old := getEntry(idx, rel)
		if old == nil {
			continue
		}
		e := *old
		fillStat(&e, fi)
		setEntry(idx, &e)
	}
	if hashHook != nil {
		hashHook("refresh")
	}
	r.commitIndex(lock, idx, refreshPoints) // on failure it removes the lock and forgets the cache
}

// statClean compares the stat data git keeps in an index entry.
func statClean(ie *index.Entry, fi fs.FileInfo) bool {
	if ie.ModifiedAt.IsZero() || !fi.ModTime().Equal(ie.ModifiedAt) || uint32(fi.Size()) != ie.Size {
		return false
	}
	st := statOf(fi)
	if st.hasOwnerInode && (uint32(st.ino) != ie.Inode || !st.ctime.Equal(ie.CreatedAt)) {
		return false
	}
	return true
}

// hashHook, when a test sets it, is called with the path of every regular
// file Dirty hashes, and with "refresh" when it writes the index.
var hashHook func(rel string)

// sameContent hashes the work tree file and compares it with e.
func (r *Repo) sameContent(rel string, fi fs.FileInfo, e treeEntry) bool {
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		t, err := r.tree.Readlink(rel)
		return err == nil && e.mode == modeSymlink && hashObject("blob", []byte(t)) == e.hash
	case fi.Mode().IsRegular():
		mode := modeFile
		if fi.Mode()&0o111 != 0 {
			mode = modeExec
		}
		if mode != e.mode {
			return false
		}
		if hashHook != nil {
			hashHook(rel)
		}
		b, err := r.tree.ReadFile(rel, 0)
		return err == nil && hashObject("blob", b) == e.hash
	}
	return false
}
