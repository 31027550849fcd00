package team

import "errors"

// ErrReadOnly is a team's writer's refusal of a change by a member whose
// role does not let them change the team (read): by name on the wire
// between a member's worker and the team's writer, and EROFS in a mount
// (fs/mount's errno table). A stranger's change is ErrNotMember.
var ErrReadOnly = errors.New("this team is read-only for you")

// ErrNotMaintainer is a team's writer's refusal of an approval or a
// rejection by a member whose role is not maintain.
var ErrNotMaintainer = errors.New("approving and rejecting a team's proposals need the maintain role")

// ErrPathTaken is a team's writer's refusal of a promotion to a path the
// team already has: the member changes the team's memory instead.
var ErrPathTaken = errors.New("the team already has a memory at this path")
