package team

import (
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// SharedDir is the folder of a mount where attached teams appear:
// shared/<team>/. It is synthesized by the mount, never committed to the
// personal repository.
const SharedDir = "shared"

// Attachment is one team repository attached to a member's view.
type Attachment struct {
	Name string // the team, and its folder under shared/
	Dir  string // the team repository's working tree, absolute or as given
	Role Role   // the member's role
}

// Scope is how the team's memories are labelled in indexes and recall:
// "shared/<team>".
func (a Attachment) Scope() string { return SharedDir + "/" + a.Name }

// LaptopDir is where "mindmount team join" clones teams for the personal
// repository whose git directory is gitDir: gitDir/mindmount/teams. Under
// .git nothing of it is committed, and the mount refuses writes there.
func LaptopDir(gitDir string) string { return filepath.Join(gitDir, "mindmount", Dir) }

// roleSuffix names the file beside a clone that holds the member's role
// (<team>.role: a role name; missing, unreadable or unknown: read).
const roleSuffix = ".role"

// RoleFile is the file holding the role of the laptop clone of name.
func RoleFile(gitDir, name string) string { return filepath.Join(LaptopDir(gitDir), name+roleSuffix) }

// Attached returns the teams cloned for the personal repository whose git
// directory is gitDir, sorted by name: every folder of LaptopDir with a
// valid team name that holds a git repository. None is no error.
func Attached(gitDir string) ([]Attachment, error) {
	dir := LaptopDir(gitDir)
	ents, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []Attachment
	for _, e := range ents {
		if !e.IsDir() || ValidName(e.Name()) != nil {
			continue
		}
		clone := filepath.Join(dir, e.Name())
		if fi, err := os.Lstat(filepath.Join(clone, ".git")); err != nil || !fi.IsDir() {
			continue // a clone that did not finish
		}
		out = append(out, Attachment{Name: e.Name(), Dir: clone, Role: laptopRole(gitDir, e.Name())})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// laptopRole reads a clone's role; a missing, unreadable or unknown one
// is read.
func laptopRole(gitDir, name string) Role {
	b, err := os.ReadFile(RoleFile(gitDir, name))
	if err != nil {
		return Read
	}
	r, err := ParseRole(strings.TrimSpace(string(b)))
	if err != nil {
		return Read
	}
	return r
}

// ProposalsDir is where a proposer stages files for the laptop clone of
// name, laid out as in the team's tree (gitDir/mindmount/teams/
// <name>.proposals); "mindmount team propose" commits them as a proposal
// branch and empties it. Under .git it is never committed to the personal
// repository, and no reader of the team sees it.
func ProposalsDir(gitDir, name string) string {
	return filepath.Join(LaptopDir(gitDir), name+".proposals")
}
