// Package atomicfile replaces a file whole: the new content goes to a temp
// file beside it, which is synced and renamed over it, and then the
// directory is synced. A crash or an error leaves the old content or the
// new, never a mix, and no temp file behind an error.
//
// It also owns the names of temp files (TempName, IsTemp): a temp file
// ends in ".tmp", which mindmount never commits (fs/tracker.IsTemp asks
// IsTemp), so one left by a crash inside a repository's work tree is
// never taken for a change. Files of the work tree itself are written
// through fs/gitrepo, confined to the tree; gitrepo names its temp
// files here too.
package atomicfile

import (
	"errors"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"unicode/utf8"
)

// suffix ends every temp file name.
const suffix = ".tmp"

// maxBase bounds the part of a temp name taken from the file's own name,
// so that the temp name stays within NAME_MAX (255 bytes).
const maxBase = 200

// TempName returns a fresh name for a temp file beside the file named
// base: ".<base>.<random>.tmp", hidden and never committed.
func TempName(base string) string {
	if len(base) > maxBase {
		cut := maxBase
		for cut > 0 && !utf8.RuneStart(base[cut]) {
			cut--
		}
		base = base[:cut]
	}
	return "." + base + "." + strconv.FormatUint(rand.Uint64()>>24, 36) + suffix
}

// IsTemp reports whether the base name base is a temp file's: it ends in
// ".tmp" (any case), as TempName's names and those of many other tools
// that write a temp file and rename it.
func IsTemp(base string) bool {
	return len(base) >= len(suffix) && strings.EqualFold(base[len(base)-len(suffix):], suffix)
}

// rename is os.Rename; a test makes it fail.
var rename = os.Rename

// File is a temp file that replaces its target on Commit. Write to it,
// then Commit or Abort; Abort after Commit does nothing, so
// "defer f.Abort()" is the usual pattern.
type File struct {
	f    *os.File
	path string
	perm fs.FileMode
	done bool
}

// Create starts the replacement of path, whose directory must exist. perm
// is the mode the file will have, exactly (the umask does not narrow it);
// until Commit the temp file is readable by its owner only.
func Create(path string, perm fs.FileMode) (*File, error) {
	dir, base := filepath.Split(path)
	for {
		f, err := os.OpenFile(filepath.Join(dir, TempName(base)), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, fs.ErrExist) {
			continue // another writer drew the same name
		}
		if err != nil {
			return nil, err
		}
		return &File{f: f, path: path, perm: perm}, nil
	}
}

// Write writes to the temp file.
func (f *File) Write(p []byte) (int, error) { return f.f.Write(p) }

// Commit gives the temp file its mode, syncs it, renames it over the
// target and syncs the directory. On an error the temp file is removed
// and the target is as it was (unless only the directory's sync failed:
// then the new content is in place but may not survive a crash).
func (f *File) Commit() error {
	if f.done {
		return errors.New("atomicfile: " + f.path + ": already committed or aborted")
	}
	f.done = true
	err := f.f.Chmod(f.perm)
	if err == nil {
		err = f.f.Sync()
	}
	if cerr := f.f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = rename(f.f.Name(), f.path)
	}
	if err != nil {
		os.Remove(f.f.Name())
		return err
	}
	return syncDir(filepath.Dir(f.path))
}

// Abort removes the temp file, leaving the target as it was. It does
// nothing after Commit.
func (f *File) Abort() {
	if f.done {
		return
	}
	f.done = true
	f.f.Close()
	os.Remove(f.f.Name())
}

// WriteFile replaces path by a file holding data, with mode perm exactly
// (see Create).
func WriteFile(path string, data []byte, perm fs.FileMode) error {
	f, err := Create(path, perm)
	if err != nil {
		return err
	}
	defer f.Abort()
	if _, err := f.Write(data); err != nil {
		return err
	}
	return f.Commit()
}

// syncDir makes a rename in dir durable. Systems and file systems that
// cannot sync a directory are not an error.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	d.Close()
	if errors.Is(err, syscall.EINVAL) || errors.Is(err, errors.ErrUnsupported) {
		return nil
	}
	return err
}
