package gitrepo

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// ErrLegacyDaemonRunning means a daemon of the build before the rename
// (then called engram) still serves the repository.
var ErrLegacyDaemonRunning = errors.New("a daemon of the build before the rename (engram) is serving this repository")

// legacyPrefix starts the names the build before the rename gave its files
// in .git: engram-daemon.lock, engram-<kind>.owner, engram-deep-pack and
// the folder engram/.
const legacyPrefix = "engram"

// UpgradeGitDir moves what the build before the rename kept in .git to
// today's names: the folder .git/engram/ (sync state, the cursor floor)
// becomes .git/mindmount/, lock owner records and the deep-pack mark are
// renamed so crash repair and packing find them, and the old daemon lock
// is removed. It refuses with ErrLegacyDaemonRunning while an old daemon
// holds that lock. It returns what it moved, one line each; running it
// again moves nothing.
func (r *Repo) UpgradeGitDir() ([]string, error) {
	lockPath := filepath.Join(r.gitDir, legacyPrefix+"-daemon.lock")
	if f, err := os.OpenFile(lockPath, os.O_RDWR, 0); err == nil {
		err := flock(f) // released by closing f
		if errors.Is(err, errWouldBlock) {
			b := make([]byte, 32)
			n, _ := f.ReadAt(b, 0)
			f.Close()
			holder := ""
			if pid := strings.TrimSpace(string(b[:n])); pid != "" {
				holder = " (pid " + pid + ")"
			}
			return nil, fmt.Errorf("%s: %w%s; stop it first", r.dir, ErrLegacyDaemonRunning, holder)
		}
		if err == nil {
			err = os.Remove(lockPath)
		}
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("old daemon lock: %w", err)
		}
	}
	var moved []string
	ents, err := os.ReadDir(r.gitDir)
	if err != nil {
		return nil, err
	}
	for _, e := range ents {
		name := e.Name()
		rest, ok := strings.CutPrefix(name, legacyPrefix+"-")
		if !ok || !(strings.HasSuffix(rest, ".owner") || rest == "deep-pack") || !e.Type().IsRegular() {
			continue
		}
		to := "mindmount-" + rest
		if err := renameNew(filepath.Join(r.gitDir, name), filepath.Join(r.gitDir, to)); err != nil {
			return moved, err
		}
		moved = append(moved, ".git/"+name+" -> .git/"+to)
	}
	from, to := filepath.Join(r.gitDir, legacyPrefix), filepath.Join(r.gitDir, "mindmount")
	if fi, err := os.Lstat(from); err == nil && fi.IsDir() {
		// A socket is the old daemon's and dies with it.
		os.Remove(filepath.Join(from, "sync.sock"))
		if err := moveTree(from, to); err != nil {
			return moved, err
		}
		moved = append(moved, ".git/"+legacyPrefix+"/ -> .git/mindmount/")
	}
	return moved, nil
}

// renameNew renames from to to unless to exists: then from, a leftover of
// the old build, is removed and to, written by this build, is kept.
func renameNew(from, to string) error {
	if _, err := os.Lstat(to); err == nil {
		return os.Remove(from)
	}
	return os.Rename(from, to)
}

// moveTree moves the folder from to to; where both hold a file, to's is
// kept (this build wrote it after the old one stopped). from is removed.
// Symbolic links are moved as links, never followed.
func moveTree(from, to string) error {
	if _, err := os.Lstat(to); errors.Is(err, os.ErrNotExist) {
		return os.Rename(from, to)
	}
	ents, err := os.ReadDir(from)
	if err != nil {
		return err
	}
	for _, e := range ents {
		src, dst := filepath.Join(from, e.Name()), filepath.Join(to, e.Name())
		if e.IsDir() {
			if fi, err := os.Lstat(dst); err == nil && !fi.IsDir() {
				continue // a file of this build's where the old one had a folder
			}
			if err := moveTree(src, dst); err != nil {
				return err
			}
			continue
		}
		if err := renameNew(src, dst); err != nil {
			return err
		}
	}
	return os.RemoveAll(from)
}
