package harness

// TeamSkills is one team's active skills to project: the team's name, the
// folder of its memory (shared/<team> in a mount, or the team's clone)
// and the names of its active skills.
type TeamSkills struct {
	Team   string
	Memory string
	Names  []string
}

// ProjectTeamSkills links each team's skills into the harness's skills
// folder dir as <team>-<name> (mm-<team>-<name> when the user has a skill
// of that name), as ProjectSkills does for the personal memory, and
// removes the links it made before to a team's skills no longer named.
// UnprojectSkills with the team's Memory removes them.
func ProjectTeamSkills(dir string, teams []TeamSkills) (made, notes []string, err error) {
	for _, t := range teams {
		m, n, err := projectAs(dir, t.Memory, t.Names, t.Team+"-")
		made, notes = append(made, m...), append(notes, n...)
		if err != nil {
			return made, notes, err
		}
	}
	return made, notes, nil
}
