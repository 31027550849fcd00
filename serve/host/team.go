package host

import "os"

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
