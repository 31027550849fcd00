// Package template holds the skeleton of a new mindmount repository, embedded
// in the binary: the base persona, the user block, the memory folders, the
// transcripts inbox, a .gitignore for editor and tool temporaries and the
// synthesized files, and a README that teaches the agent its memory.
//
// Write adds what a repository is missing and never replaces a file, so
// "mindmount init" is safe to run on a repository that is already in use.
package template

import (
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"unicode"
)

//go:embed all:skeleton
var skeleton embed.FS

// Files returns the template tree (paths relative to the repository root).
// user.md still holds its {{name}} placeholders; Write fills them in.
func Files() fs.FS {
	sub, err := fs.Sub(skeleton, "skeleton")
	if err != nil {
		// fs.Sub only fails on an invalid name, and "skeleton" is a
		// constant that the embed directive above guarantees exists.
		panic(err)
	}
	return sub
}

// Paths lists every template file, sorted, slash-separated.
func Paths() []string {
	var out []string
	fs.WalkDir(Files(), ".", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			out = append(out, p)
		}
		return nil
	})
	sort.Strings(out)
	return out
}

// Render returns the content of template file p for a user called user
// ("" when the name is not known).
func Render(p, user string) ([]byte, error) {
	b, err := fs.ReadFile(Files(), p)
	if err != nil {
		return nil, err
	}
	if p == "user.md" {
		b = fillUser(b, user)
	}
	return b, nil
}

// fillUser fills the {{name}} placeholders of user.md.
func fillUser(b []byte, user string) []byte {
	user = cleanName(user)
	title, line := user, "The user's name is "+user+"."
	if user == "" {
		title, line = "User", "The user's name is not known yet; when you learn it, write it here."
	}
	s := strings.ReplaceAll(string(b), "{{name_line}}", line)
	return []byte(strings.ReplaceAll(s, "{{name}}", title))
}

// cleanName keeps a name on one line of printable text.
func cleanName(s string) string {
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, s)
	return strings.Join(strings.Fields(s), " ")
}

// Write adds the template files missing from dir (creating dir and folders
// as needed) and returns the paths it created, sorted. An existing file is
// never replaced unless overwrite is set. A ".gitkeep" is only added to a
// folder that is missing or empty: a folder that already holds files does
// not need one.
func Write(dir, user string, overwrite bool) (created []string, err error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	for _, p := range Paths() {
		abs := filepath.Join(dir, filepath.FromSlash(p))
		if path.Base(p) == ".gitkeep" && !emptyOrMissing(filepath.Dir(abs)) {
			continue
		}
		data, err := Render(p, user)
		if err != nil {
			return created, err
		}
		if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
			return created, err
		}
		flags := os.O_WRONLY | os.O_CREATE | os.O_EXCL
		if overwrite {
			flags = os.O_WRONLY | os.O_CREATE | os.O_TRUNC
		}
		f, err := os.OpenFile(abs, flags, 0o644)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return created, err
		}
		_, err = f.Write(data)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return created, fmt.Errorf("write %s: %w", p, err)
		}
		created = append(created, p)
	}
	return created, nil
}

func emptyOrMissing(dir string) bool {
	ents, err := os.ReadDir(dir)
	return err != nil || len(ents) == 0
}

// CompleteIgnores appends to dir's existing .gitignore the rules of the
// template's that it lacks (a repository made before a rule existed, such
// as /.mindmount/index/), under a comment saying where they came from, and
// returns them. Lines already there, in any place, are left as they are;
// a missing .gitignore is Write's to create.
func CompleteIgnores(dir string) ([]string, error) {
	p := filepath.Join(dir, ".gitignore")
	have, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	present := map[string]bool{}
	for _, l := range strings.Split(string(have), "\n") {
		present[strings.TrimSpace(l)] = true
	}
	want, err := Render(".gitignore", "")
	if err != nil {
		return nil, err
	}
	var missing []string
	for _, l := range strings.Split(string(want), "\n") {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "#") || present[l] {
			continue
		}
		missing = append(missing, l)
	}
	if len(missing) == 0 {
		return nil, nil
	}
	add := "\n# added by mindmount init (rules of a newer template)\n" + strings.Join(missing, "\n") + "\n"
	if len(have) > 0 && have[len(have)-1] != '\n' {
		add = "\n" + add
	}
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return nil, err
	}
	_, err = f.WriteString(add)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, fmt.Errorf("append to .gitignore: %w", err)
	}
	return missing, nil
}
