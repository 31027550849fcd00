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
	var f *os.File
	deadline := time.Now().Add(r.lockTry)
	for {
		var err error
		f, err = r.createLock(lock, "ref", os.O_WRONLY)
		if err == nil {
			break
		}
		if !errors.Is(err, fs.ErrExist) || time.Now().After(deadline) {
			return fmt.Errorf("lock %s: %w", name, err)
		}
		time.Sleep(5 * time.Millisecond) // another process holds the ref lock; no event to wait on
	}
	done := false
	defer func() {
		if !done {
			f.Close()
			os.Remove(lock)
		}
		r.dropOwner("ref")
	}()
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
