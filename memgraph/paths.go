package memgraph

import (
	"path"
	"strings"
)

// IsMemoryPath reports whether rel is a markdown file that engram validates
// and ranks. Every *.md file of the repository is one, except the
// synthesized files, anything hidden (a path element starting with "."
// covers .git, .engram, editor locks like ".#note.md"), and transcripts/,
// which is the consolidation inbox and holds raw conversations.
//
// Only user_memory/ and character_memory/ files need frontmatter with a
// description. Blocks (character.md, user.md, system/**) and external
// memory (any other *.md, including a root README.md) may have none, so a
// person can drop plain notes anywhere; when they do have frontmatter, it
// is checked like any other (known keys only, valid values). External
// files without a description are listed in the context under their title.
func IsMemoryPath(rel string) bool {
	if !cleanRel(rel) || !strings.HasSuffix(rel, ".md") || IsSynthesized(rel) {
		return false
	}
	for _, el := range strings.Split(rel, "/") {
		if strings.HasPrefix(el, ".") {
			return false
		}
	}
	return rel != TranscriptsDir && !strings.HasPrefix(rel, TranscriptsDir+"/")
}

// cleanRel reports whether rel is a clean, relative, slash-separated path
// that stays inside the repository.
func cleanRel(rel string) bool {
	if rel == "" || rel == "." || strings.HasPrefix(rel, "/") || strings.Contains(rel, "\\") || strings.ContainsRune(rel, 0) {
		return false
	}
	return path.Clean(rel) == rel && rel != ".." && !strings.HasPrefix(rel, "../")
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
	}
	return KindExternal
}

// IsSynthesized reports whether rel is one of the files the daemon makes up
// on read (user_memory.md, character_memory.md, CONTEXT.md, .engram/status,
// .engram/search/...).
func IsSynthesized(rel string) bool {
	switch rel {
	case UserIndexFile, CharIndexFile, ContextFile, StatusFile, SearchDir:
		return true
	}
	return strings.HasPrefix(rel, SearchDir+"/")
}

// SearchDir is where recall is exposed as files (.engram/search/<query>).
const SearchDir = StateDir + "/search"
