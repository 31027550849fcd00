package host

import (
	"os"
	"sort"

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
	return os.Chmod(dir, 0o750)
}

// TeamGroups returns the groups of the teams user belongs to under root,
// sorted: a worker keeps them as supplementary groups (DropPrivileges).
// A configuration root does not own, or others may write, gives none.
func TeamGroups(root, user string) ([]uint32, error) {
	c, err := team.Load(root)
	if err != nil {
		return nil, err
	}
	var gs []uint32
	for _, a := range c.ForUser(root, user) {
		if g := c.Teams[a.Name].GID; g > 0 {
			gs = append(gs, uint32(g))
		}
	}
	sort.Slice(gs, func(i, j int) bool { return gs[i] < gs[j] })
	return gs, nil
}
