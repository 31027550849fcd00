package memgraph

import (
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/mindmount/mindmount/memgraph/secret"
)

// IsMemoryPath reports whether rel is a markdown file that mindmount validates
// and ranks. Every *.md file of the repository is one, except the
// synthesized files, anything hidden (a path element starting with "."
// covers .git, .mindmount, editor locks like ".#note.md"), and transcripts/,
// which is the consolidation inbox and holds raw conversations.
//
// Only user_memory/ and character_memory/ files need frontmatter with a
// description. Blocks (character.md, user.md, system/**) and external
// memory (any other *.md, including a root README.md) may have none, so a
// person can drop plain notes anywhere; when they do have frontmatter, it
// is checked like any other (known keys only, valid values). External
// files without a description are listed in the context under their title.
func IsMemoryPath(rel string) bool {
	if !isCleanRel(rel) || !strings.HasSuffix(rel, ".md") || IsSynthesized(rel) {
		return false
	}
	for _, el := range strings.Split(rel, "/") {
		if strings.HasPrefix(el, ".") {
			return false
		}
	}
	if strings.HasPrefix(rel, SkillsDir+"/") {
		// Of the skills folder only a skill's SKILL.md is a memory; its
		// scripts and references are the skill's own (skill.go).
		return IsSkillFile(rel)
	}
	return rel != TranscriptsDir && !strings.HasPrefix(rel, TranscriptsDir+"/")
}

// CleanRel is the one path-cleaning rule of a repository-relative path:
// it drops a leading "/", cleans the slash-separated path (path.Clean) and
// reports whether the result names something inside the repository (not
// the root itself, not above it). Backslashes and control characters are
// kept: whether git may hold such a name is decided where it matters.
func CleanRel(rel string) (string, bool) {
	rel = path.Clean(strings.TrimPrefix(rel, "/"))
	if rel == "." || rel == ".." || strings.HasPrefix(rel, "../") {
		return "", false
	}
	return rel, true
}

// isCleanRel reports whether rel is already a clean, relative,
// slash-separated path inside the repository (CleanRel leaves it as it
// is) with no backslash or NUL byte.
func isCleanRel(rel string) bool {
	c, ok := CleanRel(rel)
	return ok && c == rel && !strings.ContainsAny(rel, "\\\x00")
}

// KindOf returns the kind of a memory path.
func KindOf(rel string) Kind {
	switch {
	case strings.HasPrefix(rel, UserDir+"/"):
		return KindUser
	case strings.HasPrefix(rel, CharacterDir+"/"):
		return KindCharacter
	case rel == CharacterFile || rel == UserFile || strings.HasPrefix(rel, SystemDir+"/"):
		return KindBlock
	case strings.HasPrefix(rel, SkillsDir+"/"):
		return KindSkill
	}
	return KindExternal
}

// IsSynthesized reports whether rel is one of the files or folders the
// daemon makes up (SynthesizedIn), or lies in one of its virtual folders
// (.mindmount/search/<query>, .mindmount/index/...). Nobody else writes
// them and they are never committed.
func IsSynthesized(rel string) bool {
	if strings.HasPrefix(rel, SearchDir+"/") || strings.HasPrefix(rel, IndexDir+"/") {
		return true
	}
	dir, name := path.Split(rel)
	return name != "" && slices.Contains(synthesized[strings.TrimSuffix(dir, "/")], name)
}

// synthesized is the one list of what the daemon makes up, by folder ("" is
// the root), in the order the mount lists them (their inode numbers follow
// it): the indexes and CONTEXT.md at the root; under .mindmount the status
// report, the search and index folders and ConsolidateFile.
var synthesized = map[string][]string{
	"":       {UserIndexFile, CharIndexFile, ContextFile},
	StateDir: {path.Base(StatusFile), path.Base(SearchDir), path.Base(ConsolidateFile), path.Base(IndexDir)},
	IndexDir: {UserIndexFile, CharIndexFile},
}

// SynthesizedIn returns the names the daemon makes up in folder dir ("" for
// the root), in listing order, or nil. The slice is shared: do not modify it.
func SynthesizedIn(dir string) []string { return synthesized[dir] }

// ConsolidateFile is written to ask for a consolidation run: a virtual file
// in the mount, a real one in watch mode that the tracker removes. Never
// committed.
const ConsolidateFile = StateDir + "/consolidate"

// CursorFile is the consolidation cursor: how far each transcript is
// consolidated. Only consolidation writes it, in the commit holding the
// memories it accounts for; every door refuses it (tracker.ErrCursor).
const CursorFile = ".mindmount/cursor.json"

// SearchDir is where recall is exposed as files (.mindmount/search/<query>).
const SearchDir = StateDir + "/search"

// CheckName is the one rule for a name anyone writes into a repository,
// the mount, watch mode, consolidation and the git hooks alike: no control
// character anywhere in the path (C0, DEL, C1, and the Unicode line and
// paragraph separators), so that no file name can start a line of its own
// in an index, CONTEXT.md or a commit message. Memory folders add the
// slug rule (SlugProblem).
func CheckName(rel string) error {
	for i, r := range rel {
		if IsControl(r) {
			return fmt.Errorf("name has a control character (%U at byte %d); use letters, digits and dashes", r, i)
		}
	}
	if found := secret.InName(rel); len(found) > 0 {
		// The message names the rule, never the name: it holds the value.
		return fmt.Errorf("%w (rule %s); choose another name", ErrSecretName, found[0].Rule)
	}
	return nil
}

// ErrSecretName is CheckName's error for a name that holds a secret (a
// token pasted as a file name): such a name would reach the tree, commit
// messages, listings and logs.
var ErrSecretName = errors.New("name holds a secret")

// IsControl is mindmount's rule for a character that must not appear raw in a
// name, a line of a file it writes, or a commit message: C0 and C1
// controls, DEL, the Unicode line and paragraph separators, and invalid
// UTF-8. (gitrepo.CheckPath applies git's narrower byte rule to what git
// may hold.)
func IsControl(r rune) bool {
	return r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || r == '\u2028' || r == '\u2029' || r == utf8.RuneError
}

// SlugProblem says why rel breaks the slug rule, or "". Files in
// user_memory/ and character_memory/ are named <slug>.md (as are any
// folders between): lower-case a-z, digits and single dashes (ValidSlug),
// the name mindmount itself gives a memory (Slug). Hidden names (editor
// locks, ".likes-tea.md.swp") are not memories and are not checked.
func SlugProblem(rel string) string {
	k := KindOf(rel)
	if k != KindUser && k != KindCharacter {
		return ""
	}
	els := strings.Split(rel, "/")[1:]
	for i, el := range els {
		if strings.HasPrefix(el, ".") {
			return ""
		}
		name := el
		if i == len(els)-1 {
			name = strings.TrimSuffix(el, ".md")
		}
		if !ValidSlug(name) {
			return fmt.Sprintf("file name %q is not a slug: memory files are named <slug>.md with lower-case a-z, digits and single dashes (rename it to %s.md)", el, Slug(name))
		}
	}
	return ""
}

// nameProblems returns the naming problems of rel (CheckName, SlugProblem).
func nameProblems(rel string) []Problem {
	if err := CheckName(rel); err != nil {
		return []Problem{{Path: secret.SafeName(rel), Msg: err.Error()}}
	}
	if msg := SlugProblem(rel); msg != "" {
		return []Problem{{Path: rel, Msg: msg}}
	}
	return nil
}
