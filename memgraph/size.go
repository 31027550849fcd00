package memgraph

import "fmt"

// The size rule: a memory, a settings file and every file of a skill's
// folder hold at most MaxFileSize bytes. This file is its one home: Parse,
// ParseSkill, ValidateSkillPart and ParseSettings apply it to the bytes
// they hold, and a reader that learns from a file's size alone (a stat)
// that it breaks the rule records the same problem without reading it
// (SizeProblem), so no file of any size is ever held whole to be refused.

// sizeKind says which wording of the rule a file gets.
type sizeKind int

const (
	sizeMemory    sizeKind = iota
	sizeSkill              // a skill's SKILL.md
	sizeSkillPart          // any other file of a skill's folder
	sizeSettings
)

// SizeLimit is the size rule's limit for rel in bytes: MaxFileSize for the
// files the rule covers (memories, the settings file, the files of a
// skill's folder), 0 for any other file.
func SizeLimit(rel string) int64 {
	if _, ok := sizeKindOf(rel); ok {
		return MaxFileSize
	}
	return 0
}

// SizeProblem is the problem of a file of size bytes at rel that the size
// rule refuses, and false when the rule allows it or does not cover rel.
// It needs the size only: a caller that found it with a stat never reads
// the file.
func SizeProblem(rel string, size int64) (Problem, bool) {
	k, ok := sizeKindOf(rel)
	if !ok {
		return Problem{}, false
	}
	return sizeProblem(k, rel, size)
}

// sizeKindOf is the wording rel gets, false when the rule does not cover it.
func sizeKindOf(rel string) (sizeKind, bool) {
	switch {
	case rel == SettingsFile:
		return sizeSettings, true
	case IsSkillFile(rel):
		return sizeSkill, true
	case IsSkillPath(rel):
		return sizeSkillPart, true
	case IsMemoryPath(rel):
		return sizeMemory, true
	}
	return 0, false
}

// sizeProblem is the rule itself, worded for kind.
func sizeProblem(k sizeKind, rel string, size int64) (Problem, bool) {
	if size <= MaxFileSize {
		return Problem{}, false
	}
	p := Problem{Path: rel}
	switch k {
	case sizeSettings:
		p.Msg = fmt.Sprintf("file is %d bytes; a settings file holds a few lines", size)
	case sizeSkill:
		p.Err = ErrSkill
		p.Msg = fmt.Sprintf("file is %d bytes; a SKILL.md may be at most %d bytes (64 KiB): move details to references/", size, MaxFileSize)
	case sizeSkillPart:
		p.Err = ErrSkill
		p.Msg = fmt.Sprintf("file is %d bytes; files of a skill may be at most %d bytes (64 KiB): keep large data out of the repository", size, MaxFileSize)
	default:
		p.Msg = fmt.Sprintf("file is %d bytes; memory files may be at most %d bytes (64 KiB): split it or move details elsewhere", size, MaxFileSize)
	}
	return p, true
}
