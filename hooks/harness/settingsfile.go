package harness

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/mindmount/mindmount/memgraph/subtree"
)

// maxSettings bounds a harness settings file install reads: a settings
// file is a few kilobytes; a larger one (or /dev/zero behind a link) is
// refused rather than read into memory.
const maxSettings = 4 << 20

// The refusals of a settings file install will not touch. Each says why;
// the user edits such a file by hand.
var (
	// ErrSettingsOutside: the file, or a folder on its way, is a symbolic
	// link out of the user's own tree (the home folder, or the project
	// for --scope project): a cloned project can ship such a link, and
	// install would rewrite whatever it points at.
	ErrSettingsOutside = errors.New("is a symbolic link out of the folder install edits (the home folder, or the project): refused; edit the file it points to yourself, or replace the link with a copy")
	// ErrSettingsNotRegular: a FIFO, a device, a folder.
	ErrSettingsNotRegular = errors.New("is not a regular file: refused")
	// ErrSettingsTooLarge: more than maxSettings bytes.
	ErrSettingsTooLarge = fmt.Errorf("is larger than %d MiB, more than any settings file: refused", maxSettings>>20)
)

// settingsFile is one settings file as install reads and writes it: rel,
// beneath tree, the folder the user owns (every open is beneath it, with
// no symbolic link on the way: openat2). A dotfile manager's link that
// stays inside the tree is followed once, when the file is found: what is
// read and written is the file the link names, never through the link.
type settingsFile struct {
	tree *subtree.Tree
	rel  string // slash-separated, inside tree
}

// treeOf is the user's own folder that holds p: the home folder (user
// scope) or the project (project scope) when p lies in it; else p's own
// folder (a harness home an environment variable put elsewhere).
func treeOf(o InstallOptions, p string) string {
	for _, root := range []string{o.Project, o.Home} {
		if root == "" {
			continue
		}
		if r, err := filepath.Rel(root, p); err == nil && r != "." && !strings.HasPrefix(r, "..") {
			return root
		}
	}
	return filepath.Dir(p)
}

// openSettings finds the settings file p inside root: its symbolic links
// resolved (they must stay inside root), the rest opened beneath root.
func openSettings(root, p string) (*settingsFile, error) {
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		return nil, err
	}
	real, err := resolveExisting(p)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", p, err)
	}
	rel, err := filepath.Rel(realRoot, real)
	if err != nil || rel == "." || strings.HasPrefix(rel, "..") {
		return nil, fmt.Errorf("%s %w", p, ErrSettingsOutside)
	}
	t, err := subtree.Open(realRoot)
	if err != nil {
		return nil, err
	}
	return &settingsFile{tree: t, rel: filepath.ToSlash(rel)}, nil
}

// resolveExisting is p with every symbolic link resolved, for the part of
// p that exists; the rest is appended as it is. A link whose target is
// missing is refused: writing through it would create that target.
func resolveExisting(p string) (string, error) {
	rest := ""
	for cur := p; ; cur = filepath.Dir(cur) {
		if fi, err := os.Lstat(cur); err == nil {
			real, err := filepath.EvalSymlinks(cur)
			if err != nil {
				if fi.Mode()&fs.ModeSymlink != 0 {
					return "", ErrSettingsOutside
				}
				return "", err
			}
			return filepath.Join(real, rest), nil
		}
		if filepath.Dir(cur) == cur {
			return p, nil
		}
		rest = filepath.Join(filepath.Base(cur), rest)
	}
}

func (f *settingsFile) close() { f.tree.Close() }

// path is the file's path, for messages and backups.
func (f *settingsFile) path() string { return filepath.Join(f.tree.Dir(), filepath.FromSlash(f.rel)) }

// read returns the file's content; existed is false when there is none.
// A non-regular file and one over maxSettings are refused (opened without
// blocking: a FIFO never hangs install).
func (f *settingsFile) read() (data []byte, existed bool, err error) {
	data, err = f.tree.ReadFile(f.rel, maxSettings)
	switch {
	case err == nil:
		return data, true, nil
	case errors.Is(err, fs.ErrNotExist):
		return nil, false, nil
	case errors.Is(err, subtree.ErrNotRegular):
		return nil, false, fmt.Errorf("%s %w", f.path(), ErrSettingsNotRegular)
	case errors.Is(err, subtree.ErrTooLarge):
		return nil, false, fmt.Errorf("%s %w", f.path(), ErrSettingsTooLarge)
	case errors.Is(err, subtree.ErrUnsafePath):
		return nil, false, fmt.Errorf("%s %w", f.path(), ErrSettingsOutside)
	}
	return nil, false, err
}

// mode is the file's permission bits, 0644 for a new file.
func (f *settingsFile) mode() os.FileMode {
	if fi, err := f.tree.Lstat(f.rel); err == nil && fi.Mode().IsRegular() {
		return fi.Mode().Perm()
	}
	return 0o644
}

// write replaces the file whole (a temp file renamed over it, beneath the
// tree: a link put in its place meanwhile is replaced, not followed).
func (f *settingsFile) write(rel string, data []byte, perm os.FileMode) error {
	return f.tree.WriteFile(rel, data, perm, true)
}

// remove deletes the file.
func (f *settingsFile) remove() error { return f.tree.Remove(f.rel) }
