package gitrepo

import (
	"io/fs"
	"path/filepath"
	"sort"
	"strings"

	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5/plumbing/format/gitignore"
	"github.com/go-git/go-git/v5/plumbing/format/index"
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
	indexTime := r.idx.key.mtime
	seen := make(map[string]bool, len(files))
	var out []string
	// The walk and every read go beneath the work tree by descriptor and
	// follow no link (subtree): a folder swapped for a link is not listed.
	err = r.tree.WalkDir(".", func(rel string, d fs.DirEntry, err error) error {
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
			if d.Name() == ".git" || (!dirs[rel] && r.Ignored(rel+"/")) {
				return filepath.SkipDir
			}
			return nil
		}
		e, tracked := files[rel]
		if !tracked {
			if (d.Type().IsRegular() || d.Type()&fs.ModeSymlink != 0) && !r.Ignored(rel) {
				out = append(out, rel)
			}
			return nil
		}
		seen[rel] = true
		fi, err := d.Info()
		if err != nil {
			out = append(out, rel)
			return nil
		}
		if ie := getEntry(idx, rel); ie != nil && ie.Hash == e.hash && uint32(ie.Mode) == e.mode &&
			statClean(ie, fi) && ie.ModifiedAt.Before(indexTime) {
			return nil
		}
		if !r.sameContent(rel, fi, e) {
			out = append(out, rel)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	for rel, e := range files {
		if !seen[rel] && e.mode != modeGitlink {
			out = append(out, rel)
		}
	}
	sort.Strings(out)
	return out, nil
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
		b, err := r.tree.ReadFile(rel, 0)
		return err == nil && hashObject("blob", b) == e.hash
	}
	return false
}
