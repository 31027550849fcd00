package host

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/mindmount/mindmount/memgraph"
	"github.com/mindmount/mindmount/memgraph/team"
)

// GiveToTeam makes a team's repository its team's: every entry root owns
// becomes uid:gid (as GiveToUser, never following a symlink), and the
// repository's folder is 0750, so the kernel lets the team's uid and the
// members of its group in (a member's worker has the group as a
// supplementary group) and nobody else.
func GiveToTeam(dir string, uid, gid uint32) error {
	if err := GiveToUser(dir, uid, gid); err != nil {
		return err
	}
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("%s: %w", dir, err)
	}
	defer unix.Close(fd)
	if err := unix.Fchmod(fd, 0o750); err != nil {
		return err
	}
	return groupReads(fd, uid, 0)
}

// groupReads lets the team's group read the tree below dfd: each folder
// and regular file the team's uid owns gains g+r (folders g+rx), never
// g+w, so members' workers read it and only the team's writer changes
// it. Nothing is followed (each entry opened O_NOFOLLOW beneath its
// folder's descriptor), a file with several links is left alone, and the
// inbox (transcripts/: private talk, never committed) stays the team's.
func groupReads(dfd int, uid uint32, depth int) error {
	if depth > maxDepth {
		return errors.New("folders nested too deep")
	}
	d, err := dupCloexec(dfd)
	if err != nil {
		return err
	}
	names, err := readNames(d)
	if err != nil {
		return err
	}
	var first error
	for _, name := range names {
		if name == "." || name == ".." || depth == 0 && name == memgraph.TranscriptsDir {
			continue
		}
		fd, err := unix.Openat(dfd, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
		if err != nil {
			if !errors.Is(err, unix.ELOOP) && first == nil { // ELOOP: a symlink, left alone
				first = err
			}
			continue
		}
		if err := groupRead(fd, uid, depth); err != nil && first == nil {
			first = err
		}
		unix.Close(fd)
	}
	return first
}

// groupRead is groupReads' step for one opened entry.
func groupRead(fd int, uid uint32, depth int) error {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil || st.Uid != uid {
		return err
	}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFREG:
		if st.Nlink > 1 {
			return nil
		}
		return unix.Fchmod(fd, st.Mode&0o7777|0o040)
	case unix.S_IFDIR:
		if err := unix.Fchmod(fd, st.Mode&0o7777|0o050); err != nil {
			return err
		}
		return groupReads(fd, uid, depth+1)
	}
	return nil
}

// TeamGroups returns the groups of the teams user belongs to under root,
// sorted: a worker keeps them as supplementary groups (DropPrivileges).
// A configuration root does not own, or others may write, gives none.
func TeamGroups(root, user string) ([]uint32, error) {
	_, gs, err := MemberTeams(root, user)
	return gs, err
}

// MemberTeams returns, from one read of ROOT/teams.conf, the teams user
// belongs to (each with its repository and the user's role) and their
// groups, sorted: what a worker projects at shared/<team>/ and the
// supplementary groups that let the kernel give it those and no others.
// A configuration root does not own, or others may write, gives none.
func MemberTeams(root, user string) ([]team.Attachment, []uint32, error) {
	c, err := team.Load(root)
	if err != nil {
		return nil, nil, err
	}
	return c.ForUser(root, user), teamGroups(c, root, user), nil
}

func teamGroups(c team.Config, root, user string) []uint32 {
	var gs []uint32
	for _, a := range c.ForUser(root, user) {
		if g := c.Teams[a.Name].GID; g > 0 {
			gs = append(gs, uint32(g))
		}
	}
	sort.Slice(gs, func(i, j int) bool { return gs[i] < gs[j] })
	return gs
}

// teamPrint is what a worker's teams depend on: each team of user with
// its role and group. Two equal prints mean a running worker already
// has the right groups and projection; any difference restarts it
// (Workers.reload).
func teamPrint(c team.Config, root, user string) string {
	var b strings.Builder
	for _, a := range c.ForUser(root, user) {
		fmt.Fprintf(&b, "%s:%s:%d ", a.Name, a.Role, c.Teams[a.Name].GID)
	}
	return b.String()
}

// loadTeams reads ROOT/teams.conf for reload. A configuration that cannot
// be trusted or read is no team at all, as each worker reads it.
func (ws *Workers) loadTeams() team.Config {
	c, err := team.Load(ws.cfg.Root)
	if err != nil {
		ws.log.Warn("teams configuration refused; no user has a team", "err", err)
		return team.Config{}
	}
	return c
}
