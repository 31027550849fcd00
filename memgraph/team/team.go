// Package team is team memory's membership: which teams a serve ROOT has,
// who belongs to each and with which role (the root-owned file
// ROOT/teams.conf), and which team repositories are attached to a
// repository (Attachment; on a laptop the clones under the personal
// repository's .git/mindmount/teams/).
//
// A team's memory is a repository of its own, of the same format as a
// personal one. Membership never lives inside a repository, so no writer
// can grant itself a role.
package team

import (
	"errors"
	"fmt"
)

// Role is what a member may do with a team's memory.
type Role string

// The roles, weakest first.
const (
	// Read: every mutating call on shared/<team> is refused (EROFS).
	Read Role = "read"
	// Propose: a write lands on a proposal branch
	// (mindmount/proposal/<user>/<n>) until a maintainer approves it.
	Propose Role = "propose"
	// Write: a write is committed directly, the member its author.
	Write Role = "write"
	// Maintain: Write, and approves or rejects proposals.
	Maintain Role = "maintain"
)

// Roles lists every role, weakest first.
var Roles = []Role{Read, Propose, Write, Maintain}

// Errors a caller may tell apart.
var (
	ErrBadName     = errors.New("invalid team or user name")
	ErrBadRole     = errors.New("invalid role")
	ErrUnknownTeam = errors.New("unknown team")
	ErrExists      = errors.New("team exists")
	ErrNotMember   = errors.New("not a member")
	// ErrUnsafeConfig: the configuration file is not owned by root or
	// others may write it; it is ignored (no team at all).
	ErrUnsafeConfig = errors.New("teams configuration not owned by root or writable by others")
)

// ParseRole returns the role named s.
func ParseRole(s string) (Role, error) {
	for _, r := range Roles {
		if string(r) == s {
			return r, nil
		}
	}
	return "", fmt.Errorf("%w %q (one of read, propose, write, maintain)", ErrBadRole, s)
}

// Mutates reports whether the role may change the team's tree at all,
// directly or as a proposal.
func (r Role) Mutates() bool { return r == Propose || r == Write || r == Maintain }

// Commits reports whether the role's writes are committed directly.
func (r Role) Commits() bool { return r == Write || r == Maintain }

// Approves reports whether the role may approve or reject proposals.
func (r Role) Approves() bool { return r == Maintain }

// MaxNameLen is the longest team name.
const MaxNameLen = 64

// ValidName is the team-name grammar, the same as a user ID's: lower-case
// ASCII letters, digits, '.', '_' and '-', a letter or digit first, at most
// 64 bytes. A name is a directory name as it is: nothing climbs out
// ("..", "/") or hides (a leading dot).
func ValidName(name string) error {
	if name == "" || len(name) > MaxNameLen {
		return fmt.Errorf("%w: %d bytes (1 to %d)", ErrBadName, len(name), MaxNameLen)
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case 'a' <= c && c <= 'z', '0' <= c && c <= '9':
		case (c == '.' || c == '_' || c == '-') && i > 0:
		default:
			return fmt.Errorf("%w %q: character %q at %d (lower-case letters, digits, '.', '_', '-'; a letter or digit first)", ErrBadName, name, c, i)
		}
	}
	return nil
}
