package host

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"

	"github.com/mindmount/mindmount/fs/gitrepo"
	"github.com/mindmount/mindmount/memgraph"
	"github.com/mindmount/mindmount/memgraph/atomicfile"
)

// A repository made before the rename, when mindmount was called engram,
// keeps its daemon state in .engram/, names the merge drivers engram-cursor
// and engram-memory in .gitattributes, ignores /.engram/... in .gitignore
// and points the agent at .engram/search/ in README.md. "mindmount init"
// upgrades it in one commit (InitRepo); the git side (.git/engram/, lock records,
// hooks, driver config) is moved by gitrepo.UpgradeGitDir and hooks.Install.

const stateDir = memgraph.StateDir

// upgrade is what upgradeRepo changed: the commit's changes (computed from
// HEAD, so the user's uncommitted edits stay uncommitted) and one line per
// change for the commit message and the user.
type upgrade struct {
	changes []gitrepo.Change
	lines   []string
}

// upgradeRepo moves a repository made before the rename to today's names,
// in the work tree and in .git, and returns the changes to commit. It
// returns nil when there was nothing to upgrade. A step that fails leaves
// every file where it was or where it belongs; running init again finishes
// the work (the commit is computed from HEAD, which only the commit moves).
func upgradeRepo(r *gitrepo.Repo) (*upgrade, error) {
	u := &upgrade{}
	moved, err := r.UpgradeGitDir()
	u.lines = append(u.lines, moved...)
	if err != nil {
		return nil, err
	}
	dir := r.Dir()
	movedState, err := moveState(dir)
	if err != nil {
		return nil, err
	}
	tracked, err := r.HeadFiles(LegacyStateDir)
	if err != nil {
		return nil, err
	}
	if !movedState && len(tracked) == 0 && len(moved) == 0 {
		// Not made by the old build: a README or .gitignore of the user's
		// that mentions a folder of that name is none of our business.
		return nil, nil
	}
	for _, old := range tracked {
		to := stateDir + strings.TrimPrefix(old, LegacyStateDir)
		u.changes = append(u.changes, gitrepo.Change{Path: old, Delete: true})
		u.lines = append(u.lines, old+" -> "+to)
		if _, ok, err := r.ReadHead(to); err != nil {
			return nil, err
		} else if ok {
			continue // committed under the new name already: that one stays
		}
		data, _, err := r.ReadHead(old)
		if err != nil {
			return nil, err
		}
		exec, _, err := r.HeadExec(old)
		if err != nil {
			return nil, err
		}
		u.changes = append(u.changes, gitrepo.Change{Path: to, Data: data, Exec: exec})
	}
	for _, f := range legacyTexts {
		changed := false
		head, ok, err := r.ReadHead(f.name)
		if err != nil {
			return nil, err
		}
		if next := f.rewrite(head); ok && next != string(head) {
			u.changes = append(u.changes, gitrepo.Change{Path: f.name, Data: []byte(next)})
			changed = true
		}
		if wrote, err := rewriteFile(filepath.Join(dir, f.name), f.rewrite); err != nil {
			return nil, err
		} else if wrote {
			changed = true
		}
		if changed {
			u.lines = append(u.lines, f.name+": "+f.what)
		}
	}
	if len(u.lines) == 0 {
		return nil, nil
	}
	return u, nil
}

// message is the upgrade commit's message; added lists the template files
// committed with it.
func (u *upgrade) message(added []string) string {
	var b strings.Builder
	b.WriteString("mindmount init: upgrade a repository made before the rename (engram is now mindmount)\n\n")
	for _, l := range u.lines {
		b.WriteString("  " + l + "\n")
	}
	if len(added) > 0 {
		b.WriteString("\nAdded from the template:\n  " + strings.Join(added, "\n  ") + "\n")
	}
	return b.String()
}

// legacyTexts are the tracked files the old build wrote that name it, and
// how each is rewritten. Every rewrite is idempotent.
var legacyTexts = []struct {
	name, what string
	rewrite    func([]byte) string
}{
	{".gitattributes", "merge drivers engram-* -> mindmount-*", rewriteLegacyRules},
	{".gitignore", "rules for .engram/ -> .mindmount/", rewriteLegacyRules},
	{"README.md", "paths .engram/ -> .mindmount/", rewriteLegacyPaths},
}

var (
	legacyWord = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\bengram\b`) })
	// A rule naming the state folder: ".engram/…", "/.engram/…", or the
	// folder itself at the end of the pattern.
	legacyRulePath = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(^|/)\.engram(/|$)`) })
)

// rewriteLegacyRules rewrites a .gitattributes or .gitignore: the state
// folder in patterns, the driver names in attributes, and the old name in
// comments. Other lines stay byte for byte.
func rewriteLegacyRules(b []byte) string {
	lines := strings.SplitAfter(string(b), "\n")
	for i, l := range lines {
		body := strings.TrimRight(l, "\r\n")
		nl := l[len(body):]
		if strings.HasPrefix(strings.TrimSpace(body), "#") {
			body = legacyWord().ReplaceAllString(body, "mindmount")
		} else {
			fields := strings.Fields(body)
			for j, f := range fields {
				f = legacyRulePath().ReplaceAllString(f, "${1}"+stateDir+"${2}")
				f = strings.Replace(f, "merge=engram-", "merge=mindmount-", 1)
				fields[j] = f
			}
			if len(fields) > 0 {
				body = rejoin(body, fields)
			}
		}
		lines[i] = body + nl
	}
	return strings.Join(lines, "")
}

// rejoin puts rewritten fields back into line, keeping its spacing.
func rejoin(line string, fields []string) string {
	var b strings.Builder
	rest := line
	for _, f := range strings.Fields(line) {
		i := strings.Index(rest, f)
		b.WriteString(rest[:i])
		b.WriteString(fields[0])
		fields = fields[1:]
		rest = rest[i+len(f):]
	}
	b.WriteString(rest)
	return b.String()
}

// rewriteLegacyPaths points README.md's paths into the state folder at its
// new name; the rest of the text is the user's.
func rewriteLegacyPaths(b []byte) string {
	return strings.ReplaceAll(string(b), LegacyStateDir+"/", stateDir+"/")
}

// rewriteFile applies rewrite to the work-tree file p, if it is a regular
// file, keeping its mode; it reports whether it wrote.
func rewriteFile(p string, rewrite func([]byte) string) (bool, error) {
	fi, err := os.Lstat(p)
	if errors.Is(err, fs.ErrNotExist) || (err == nil && !fi.Mode().IsRegular()) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	old, err := os.ReadFile(p)
	if err != nil {
		return false, err
	}
	next := rewrite(old)
	if next == string(old) {
		return false, nil
	}
	return true, atomicfile.WriteFile(p, []byte(next), fi.Mode().Perm())
}

// moveState renames the work tree's .engram/ to .mindmount/ and reports
// whether there was one. Where both
// exist, each old file moves unless the new folder has a file there: equal
// ones are dropped, different ones stop the upgrade before anything else
// changes, naming both, so no data is lost. A symbolic link is never
// followed.
func moveState(dir string) (bool, error) {
	from, to := filepath.Join(dir, LegacyStateDir), filepath.Join(dir, stateDir)
	fi, err := os.Lstat(from)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if !fi.IsDir() {
		return false, fmt.Errorf("%s is not a folder: move it out of the way by hand, then run mindmount init again", from)
	}
	if _, err := os.Lstat(to); errors.Is(err, fs.ErrNotExist) {
		return true, os.Rename(from, to)
	}
	return true, mergeState(from, to)
}

// mergeState moves the files of from into to, which exists (see moveState).
func mergeState(from, to string) error {
	// Check every file first, so a conflict moves nothing.
	var conflicts []string
	err := filepath.WalkDir(from, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		if !sameFile(p, filepath.Join(to, rel)) {
			if _, err := os.Lstat(filepath.Join(to, rel)); err == nil {
				conflicts = append(conflicts, rel)
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	if len(conflicts) > 0 {
		return fmt.Errorf("both %s and %s hold %s, with different content: keep one of each by hand, then run mindmount init again",
			LegacyStateDir, stateDir, strings.Join(conflicts, ", "))
	}
	err = filepath.WalkDir(from, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		dst := filepath.Join(to, rel)
		if _, err := os.Lstat(dst); err == nil {
			return os.Remove(p) // equal: checked above
		}
		if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
			return err
		}
		return os.Rename(p, dst)
	})
	if err != nil {
		return err
	}
	return os.RemoveAll(from) // only empty folders are left
}

// sameFile reports whether a and b are both regular files with the same
// content, or both links to the same target.
func sameFile(a, b string) bool {
	fa, err := os.Lstat(a)
	if err != nil {
		return false
	}
	fb, err := os.Lstat(b)
	if err != nil || fa.Mode().Type() != fb.Mode().Type() {
		return false
	}
	if fa.Mode()&fs.ModeSymlink != 0 {
		ta, _ := os.Readlink(a)
		tb, _ := os.Readlink(b)
		return ta == tb
	}
	if !fa.Mode().IsRegular() || fa.Size() != fb.Size() {
		return false
	}
	da, err := os.ReadFile(a)
	if err != nil {
		return false
	}
	db, err := os.ReadFile(b)
	return err == nil && string(da) == string(db)
}
