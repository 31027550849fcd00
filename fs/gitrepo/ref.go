package gitrepo

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
)

// errRefChanged means the branch no longer points where the commit started.
var errRefChanged = errors.New("reference changed concurrently")

// casRef moves ref name from old (zero: unborn) to id the way git does: it
// takes "<ref>.lock" exclusively, checks the current value, writes the new
// value into the lock file and renames it into place. Readers never see a
// half-written ref, and a git command updating the same ref at the same time
// is excluded by the same lock file. isHead says that name is HEAD's
// branch, whose moves HEAD's reflog records too.
func (r *Repo) casRef(name plumbing.ReferenceName, old, id plumbing.Hash, who Author, when time.Time, subject string, isHead bool) error {
	base := filepath.Dir(r.objDir) // refs live in the common dir
	if name == plumbing.HEAD {
		base = r.gitDir
	}
	p := filepath.Join(base, filepath.FromSlash(string(name)))
	if err := os.MkdirAll(filepath.Dir(p), r.dirPerm()); err != nil {
		return err
	}
	lock := p + ".lock"
	f, release, err := r.waitLock(lock, "ref", name.String())
	if err != nil {
		return err
	}
	done := false
	defer func() { release(done) }()
	if err := r.checkRef(name, old); err != nil {
		return err
	}
	if _, err := f.WriteString(id.String() + "\n"); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(lock, p); err != nil {
		return err
	}
	done = true
	r.appendReflog(string(name), old, id, who, when, subject)
	if name != plumbing.HEAD && isHead {
		r.appendReflog("HEAD", old, id, who, when, subject)
	}
	return nil
}

// appendReflog records the move in .git/logs like git does, when that log
// exists or the repository keeps logs (best effort: a reflog is a
// convenience for recovery, not part of the commit).
func (r *Repo) appendReflog(name string, old, id plumbing.Hash, who Author, when time.Time, subject string) {
	base := filepath.Dir(r.objDir)
	if name == "HEAD" {
		base = r.gitDir
	}
	p := filepath.Join(base, "logs", filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(p), r.dirPerm()); err != nil {
		return
	}
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND|os.O_CREATE, r.filePerm(false))
	if err != nil {
		return
	}
	defer f.Close()
	action := "commit"
	if old.IsZero() {
		action = "commit (initial)"
	}
	subject = strings.ReplaceAll(subject, "\n", " ")
	fmt.Fprintf(f, "%s %s %s\t%s: %s\n", old, id, identLine(who, when), action, subject)
}

// waitLock creates lock (of kind, see createLock) exclusively, waiting up
// to the repository's lock timeout while another process holds it.
// release gives it up: the file is removed unless renamed into place.
func (r *Repo) waitLock(lock, kind, what string) (f *os.File, release func(renamed bool), err error) {
	deadline := time.Now().Add(r.lockTry)
	for {
		f, err := r.createLock(lock, kind, os.O_WRONLY)
		if err == nil {
			return f, func(renamed bool) {
				if !renamed {
					f.Close()
					os.Remove(lock)
				}
				r.dropOwner(kind)
			}, nil
		}
		if !errors.Is(err, fs.ErrExist) || time.Now().After(deadline) {
			return nil, nil, fmt.Errorf("lock %s: %w", what, err)
		}
		time.Sleep(5 * time.Millisecond) // another process holds the lock; no event to wait on
	}
}

// checkRef returns errRefChanged unless ref name points at old (zero:
// does not exist). Its lock is held.
func (r *Repo) checkRef(name plumbing.ReferenceName, old plumbing.Hash) error {
	cur, err := r.store.Reference(name)
	switch {
	case errors.Is(err, plumbing.ErrReferenceNotFound):
		if !old.IsZero() {
			return errRefChanged
		}
	case err != nil:
		return err
	case cur.Type() != plumbing.HashReference || cur.Hash() != old:
		return errRefChanged
	}
	return nil
}

// deleteRef removes branch ref name, which must point at old, the way git
// does ("git branch -D"): under "<ref>.lock" it checks the value, drops
// the ref from packed-refs (under packed-refs.lock; a "git gc" may have
// packed it) before removing the loose file, so the packed value can
// never show through, and removes the branch's reflog. Readers see the
// branch at old or gone, nothing in between.
func (r *Repo) deleteRef(name plumbing.ReferenceName, old plumbing.Hash) error {
	common := filepath.Dir(r.objDir)
	p := filepath.Join(common, filepath.FromSlash(string(name)))
	_, release, err := r.waitLock(p+".lock", "ref", name.String())
	if err != nil {
		return err
	}
	defer release(false)
	if err := r.checkRef(name, old); err != nil {
		return err
	}
	if err := r.unpackRef(common, name); err != nil {
		return err
	}
	if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	os.Remove(filepath.Join(common, "logs", filepath.FromSlash(string(name)))) // best effort, as the reflog is
	return nil
}

// unpackRef rewrites packed-refs without name (and the peeled line that
// may follow it), when it is there.
func (r *Repo) unpackRef(common string, name plumbing.ReferenceName) error {
	packed := filepath.Join(common, "packed-refs")
	b, err := os.ReadFile(packed)
	if errors.Is(err, fs.ErrNotExist) || err == nil && !strings.Contains(string(b), " "+name.String()+"\n") {
		return nil
	}
	if err != nil {
		return err
	}
	lock := packed + ".lock"
	f, release, err := r.waitLock(lock, "packed-refs", "packed-refs")
	if err != nil {
		return err
	}
	done := false
	defer func() { release(done) }()
	if b, err = os.ReadFile(packed); err != nil { // again, under the lock
		return err
	}
	var out strings.Builder
	skipPeeled := false
	for _, line := range strings.SplitAfter(string(b), "\n") {
		if skipPeeled && strings.HasPrefix(line, "^") {
			continue
		}
		_, ref, _ := strings.Cut(strings.TrimSuffix(line, "\n"), " ")
		skipPeeled = !strings.HasPrefix(line, "#") && !strings.HasPrefix(line, "^") && ref == name.String()
		if !skipPeeled {
			out.WriteString(line)
		}
	}
	if _, err := f.WriteString(out.String()); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(lock, packed); err != nil {
		return err
	}
	done = true
	return nil
}
