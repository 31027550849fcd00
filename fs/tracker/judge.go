package tracker

import "github.com/mindmount/mindmount/memgraph"

// Judge applies the commit rules to one memory file (memgraph.IsMemoryPath):
// data is the new content (exists false: the file is deleted), prev the
// committed one (inHead false: the file is new). A change to, or the
// deletion of, a file that is read_only in the last commit is refused;
// everything else is memgraph.Validate. The tracker judges every write with
// it, and the pre-commit hook (package hooks) every "git commit", so the
// two can never disagree.
func Judge(rel string, data []byte, exists bool, prev []byte, inHead bool) []memgraph.Problem {
	if inHead && committedReadOnly(rel, prev) {
		msg := "read_only: true protects this file; the change is not committed (undo it with: git checkout -- " + rel + ")"
		if !exists {
			msg = "read_only: true protects this file; its deletion is not committed (restore it with: git checkout -- " + rel + ")"
		}
		return []memgraph.Problem{{Path: rel, Msg: msg, Err: ErrReadOnly}}
	}
	if !exists {
		return nil
	}
	var prevArg []byte
	if inHead {
		prevArg = prev
	}
	return memgraph.Validate(rel, data, prevArg)
}

// Judged reports whether rel is judged before it is committed: the memory
// files, the repository's settings file (a bad setting is refused like
// an invalid memory, so the daemon and "git commit" agree on it too) and
// every file of a skill's folder (memgraph.IsSkillPath).
func Judged(rel string) bool {
	return memgraph.IsMemoryPath(rel) || rel == memgraph.SettingsFile || memgraph.IsSkillPath(rel)
}

// SymlinkProblem is the refusal of a symbolic link: mindmount commits regular
// files only.
func SymlinkProblem(rel string) memgraph.Problem {
	return memgraph.Problem{Path: rel, Msg: "symbolic links are not committed; replace it with a regular file", Err: ErrSymlink}
}
