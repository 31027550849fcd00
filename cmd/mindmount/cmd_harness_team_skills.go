package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/mindmount/mindmount/hooks/harness"
	"github.com/mindmount/mindmount/memgraph"
	"github.com/mindmount/mindmount/memgraph/team"
)

// teamSkillDirs lists the teams whose skills are projected beside the
// memory mem's: the teams a mount shows under shared/<team> (the path an
// agent in a sandbox sees too), else the clones "mindmount team join"
// made. A memory with no team has none.
func teamSkillDirs(mem string) []teamDir {
	var out []teamDir
	seen := map[string]bool{}
	if ents, err := os.ReadDir(filepath.Join(mem, team.SharedDir)); err == nil {
		for _, e := range ents {
			if e.IsDir() && team.ValidName(e.Name()) == nil {
				out = append(out, teamDir{Name: e.Name(), Dir: filepath.Join(mem, team.SharedDir, e.Name())})
				seen[e.Name()] = true
			}
		}
	}
	if clones, err := teamsOf(mem); err == nil {
		for _, t := range clones {
			if !seen[t.Name] {
				out = append(out, t)
			}
		}
	}
	return out
}

// projectTeamSkills links the active skills of mem's teams into the
// harness's skills folder dir as <team>-<name> (on uninstall: removes
// those links) and says what it did.
func projectTeamSkills(name, dir, base, mem string, uninstall bool) error {
	var teams []harness.TeamSkills
	for _, t := range teamSkillDirs(mem) {
		if uninstall {
			removed, err := harness.UnprojectSkills(dir, t.Dir, base)
			if len(removed) > 0 {
				fmt.Fprintf(stdout, "mindmount: %s: removed %d skill %s of team %s from %s\n", name, len(removed), memgraph.Plural(len(removed), "link", "links"), t.Name, dir)
			}
			if err != nil {
				return err
			}
			continue
		}
		g, err := memgraph.Scan(t.Dir)
		if err != nil {
			fmt.Fprintf(stderr, "mindmount: %s: team %s's skills left out: %v\n", name, t.Name, err)
			continue
		}
		ts := harness.TeamSkills{Team: t.Name, Memory: t.Dir}
		for _, s := range g.Skills() {
			if s.Status == memgraph.SkillActive {
				ts.Names = append(ts.Names, s.Name)
			}
		}
		g.Close()
		teams = append(teams, ts)
	}
	made, notes, err := harness.ProjectTeamSkills(dir, teams)
	for _, n := range notes {
		fmt.Fprintf(stdout, "mindmount: %s: %s\n", name, n)
	}
	if len(made) > 0 {
		fmt.Fprintf(stdout, "mindmount: %s: linked %d team %s into %s\n", name, len(made), memgraph.Plural(len(made), "skill", "skills"), dir)
	}
	return err
}
