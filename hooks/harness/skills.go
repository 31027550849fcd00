package harness

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// SkillPrefix names a projected skill when the harness's folder already has
// a skill of the same name that is the user's own.
const SkillPrefix = "mm-"

// SkillsDir is the folder where harness h looks for Agent Skills in scope
// ("user": under home; "project": under project).
func SkillsDir(h, scope, home, project string) (string, error) {
	base := home
	if scope == "project" {
		base = project
	}
	if base == "" {
		return "", errors.New("no home or project directory")
	}
	switch h {
	case ClaudeCode:
		return filepath.Join(base, ".claude", "skills"), nil
	case Codex:
		return filepath.Join(base, ".agents", "skills"), nil
	case GeminiCLI:
		return filepath.Join(base, ".gemini", "skills"), nil
	case OpenCode:
		if scope == "project" {
			return filepath.Join(base, ".opencode", "skills"), nil
		}
		return filepath.Join(base, ".config", "opencode", "skills"), nil
	}
	return "", fmt.Errorf("unknown harness %q", h)
}

// ProjectSkills makes each of the named skills of the memory (its folder
// MEMORY/skills/<name>) visible in the harness's skills folder dir as a
// symbolic link, and removes the links it made before to skills that are
// no longer named. A name the user already has for a skill of their own
// is never touched: the link is called mm-<name> instead, and when that is
// taken too the skill is left out and said so.
func ProjectSkills(dir, memory string, names []string) (made, notes []string, err error) {
	return projectAs(dir, memory, names, "")
}

// projectAs is ProjectSkills with each link named prefix+<name> (a
// team's skills: <team>-<name>).
func projectAs(dir, memory string, names []string, prefix string) (made, notes []string, err error) {
	want := map[string]bool{}
	for _, n := range names {
		want[n] = true
	}
	entries, err := os.ReadDir(dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, nil, err
	}
	if len(names) > 0 {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, nil, err
		}
	}
	for _, e := range entries { // ours, to a skill no longer named: gone
		if n, ours := ourLink(dir, e.Name(), memory); ours && !want[n] {
			if err := os.Remove(filepath.Join(dir, e.Name())); err != nil {
				return made, notes, err
			}
		}
	}
	for _, n := range names {
		target := filepath.Join(memory, "skills", n)
		link, ok := "", false
		for _, cand := range []string{prefix + n, SkillPrefix + prefix + n} {
			if got, ours := ourLink(dir, cand, memory); ours && got == n {
				link, ok = cand, true
				break
			}
			if _, err := os.Lstat(filepath.Join(dir, cand)); errors.Is(err, fs.ErrNotExist) {
				if err := os.Symlink(target, filepath.Join(dir, cand)); err != nil {
					return made, notes, err
				}
				link, ok = cand, true
				break
			}
		}
		if !ok {
			notes = append(notes, fmt.Sprintf("skill %s left out: %s and %s already exist in %s and are not mindmount's", prefix+n, prefix+n, SkillPrefix+prefix+n, dir))
			continue
		}
		if link != prefix+n {
			notes = append(notes, fmt.Sprintf("skill %s linked as %s: %s is your own skill", prefix+n, link, filepath.Join(dir, prefix+n)))
		}
		made = append(made, filepath.Join(dir, link))
	}
	return made, notes, nil
}

// UnprojectSkills removes every link ProjectSkills made in dir for memory,
// and, when that leaves dir empty, dir and its empty parents up to (not
// including) base, the home or project folder.
func UnprojectSkills(dir, memory, base string) (removed []string, err error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		if _, ours := ourLink(dir, e.Name(), memory); ours {
			p := filepath.Join(dir, e.Name())
			if err := os.Remove(p); err != nil {
				return removed, err
			}
			removed = append(removed, p)
		}
	}
	if len(removed) > 0 && len(removed) == len(entries) {
		for d := dir; d != base && strings.HasPrefix(d, base+string(filepath.Separator)); d = filepath.Dir(d) {
			if os.Remove(d) != nil { // only an empty folder goes
				break
			}
		}
	}
	return removed, nil
}

// ourLink reports whether dir/name is a link ProjectSkills made for
// memory, and the skill it names.
func ourLink(dir, name, memory string) (string, bool) {
	target, err := os.Readlink(filepath.Join(dir, name))
	if err != nil {
		return "", false
	}
	prefix := filepath.Join(memory, "skills") + string(filepath.Separator)
	skill, ok := strings.CutPrefix(target, prefix)
	if !ok || skill == "" || strings.ContainsRune(skill, filepath.Separator) {
		return "", false
	}
	return skill, true
}
