package hooks

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	"github.com/mindmount/mindmount/memgraph"
)

// Rule names the merge MergeFile chose for a path.
type Rule int

// The rules, in the order MergeFile tries them.
const (
	// RuleOneSide: at most one side changed the file (or both made the
	// same change), or one deleted what the other changed: that change
	// wins, whatever the file.
	RuleOneSide Rule = iota
	// RuleCursor: the consolidation cursor (memgraph.CursorFile); every
	// transcript keeps the further position (mergeCursors).
	RuleCursor
	// RuleMemory: a memory (memgraph.IsMemoryPath, a skill's SKILL.md
	// included): mergeMemory, never a conflict marker.
	RuleMemory
	// RuleSynthesized: a file the daemon makes up and never commits
	// (memgraph.IsSynthesized): ours, it is made up again anyway.
	RuleSynthesized
	// RuleBinary: a side holds a NUL byte: no line merge can be trusted,
	// a conflict.
	RuleBinary
	// RuleAppend: a transcript (memgraph.TranscriptsDir), an append-only
	// log: both sides' appends are kept, ours first; other changes go
	// to the line merge.
	RuleAppend
	// RuleLines: any other text (the settings file, a skill's scripts and
	// references, ...): a three-way line merge (as git merge-file does).
	RuleLines
)

var ruleNames = [...]string{"one side", "cursor", "memory", "synthesized", "binary", "append", "lines"}

func (r Rule) String() string {
	if int(r) < len(ruleNames) {
		return ruleNames[r]
	}
	return fmt.Sprintf("rule %d", int(r))
}

// MergeInput is one three-way merge of a file. A nil side is a missing
// file (added or deleted).
type MergeInput struct {
	Path               string // repo-relative, slash-separated
	Base, Ours, Theirs []byte
	// TheirsNewer says which memory stays in place on a real conflict;
	// the other becomes the retired sibling.
	TheirsNewer bool
	// Taken reports whether a repo-relative path is already used, so a
	// sibling never replaces a file (nil: nothing is taken but Path).
	Taken func(rel string) bool
}

// Merged is the result of MergeFile.
type Merged struct {
	Rule Rule
	// Data is the merged file; on a line conflict, ours with git's
	// conflict markers around each conflicting hunk.
	Data []byte
	// Deleted is set when the merge removes the file.
	Deleted bool
	// SiblingPath and Sibling: a memory's real conflict keeps the other
	// version beside it, retired (mergeMemory).
	SiblingPath string
	Sibling     []byte
}

// ErrConflict means a file changed on both sides in a way no rule merges
// (MergeFile's *ConflictError matches it), or that a driver left such a
// conflict for git to report.
var ErrConflict = errors.New("merge conflict")

// ConflictError is MergeFile's refusal: which file and which rule gave up.
type ConflictError struct {
	Path string
	Rule Rule
	Err  error // the cause, when there is one beyond the overlap
}

func (e *ConflictError) Error() string {
	msg := fmt.Sprintf("%s: %s changed on both sides (%s merge)", ErrConflict, memgraph.SafeLine(e.Path), e.Rule)
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

// Is makes a ConflictError match ErrConflict.
func (e *ConflictError) Is(target error) bool { return target == ErrConflict }

func (e *ConflictError) Unwrap() error { return e.Err }

// MergeFile is the one three-way merge of a repository's file, used by
// git's merge drivers, sync, a dream's merge, a proposal's approval and the
// web page's revert: it chooses the rule by the path (RuleFor) and applies
// it. A *ConflictError (errors.Is ErrConflict) says no rule merges the two
// changes; what to do then (keep theirs beside, refuse, leave markers for
// git) is the caller's.
func MergeFile(in MergeInput) (Merged, error) {
	b, o, t := in.Base, in.Ours, in.Theirs
	rule := RuleFor(in.Path, b, o, t)
	switch rule {
	case RuleOneSide:
		return oneSide(b, o, t), nil
	case RuleCursor:
		out, err := mergeCursors(b, o, t)
		if err != nil {
			return Merged{Rule: rule, Data: o}, &ConflictError{Path: in.Path, Rule: rule, Err: err}
		}
		return Merged{Rule: rule, Data: out}, nil
	case RuleMemory:
		m := mergeMemory(memoryMergeInput{Path: in.Path, Base: b, Ours: o, Theirs: t, TheirsNewer: in.TheirsNewer, Taken: in.Taken})
		return Merged{Rule: rule, Data: m.Data, Deleted: m.Deleted, SiblingPath: m.SiblingPath, Sibling: m.Sibling}, nil
	case RuleSynthesized:
		return Merged{Rule: rule, Data: o}, nil
	case RuleBinary:
		return Merged{Rule: rule, Data: o}, &ConflictError{Path: in.Path, Rule: rule}
	case RuleAppend:
		if b != nil && bytes.HasPrefix(o, b) && bytes.HasPrefix(t, b) {
			return Merged{Rule: rule, Data: append(bytes.Clone(o), t[len(b):]...)}, nil
		}
	}
	out, ok := mergeLines(b, o, t)
	if !ok {
		return Merged{Rule: RuleLines, Data: out}, &ConflictError{Path: in.Path, Rule: RuleLines}
	}
	return Merged{Rule: RuleLines, Data: out}, nil
}

// RuleFor is the rule MergeFile applies to path with these sides.
func RuleFor(path string, b, o, t []byte) Rule {
	switch {
	case same(o, t), b != nil && same(b, o), b != nil && same(b, t), o == nil, t == nil:
		return RuleOneSide
	case path == memgraph.CursorFile:
		return RuleCursor
	case memgraph.IsMemoryPath(path):
		return RuleMemory
	case memgraph.IsSynthesized(path):
		return RuleSynthesized
	case binary(b) || binary(o) || binary(t):
		return RuleBinary
	case strings.HasPrefix(path, memgraph.TranscriptsDir+"/"):
		return RuleAppend
	}
	return RuleLines
}

// oneSide is the merge when at most one side changed: the change wins,
// and a deletion loses to a change.
func oneSide(b, o, t []byte) Merged {
	out := o
	switch {
	case same(o, t), b != nil && same(b, t): // a nil ours deletes
	case b != nil && same(b, o), o == nil: // a nil theirs deletes
		out = t
	}
	if out == nil {
		return Merged{Rule: RuleOneSide, Deleted: true}
	}
	return Merged{Rule: RuleOneSide, Data: out}
}

// same reports equal contents, a missing file equal only to one.
func same(a, b []byte) bool { return (a == nil) == (b == nil) && bytes.Equal(a, b) }

// binary is git's test: a NUL byte in the first 8000.
func binary(b []byte) bool { return bytes.IndexByte(b[:min(len(b), 8000)], 0) >= 0 }
