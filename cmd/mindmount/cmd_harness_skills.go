package main

import (
	"fmt"

	"github.com/mindmount/mindmount/hooks/harness"
	"github.com/mindmount/mindmount/memgraph"
)

// projectSkills links the memory's active skills where harness name looks
// for skills (or, on uninstall, removes the links it made) and says what it
// did.
func projectSkills(name, scope, home, project, mem string, uninstall bool) error {
	dir, err := harness.SkillsDir(name, scope, home, project)
	if err != nil {
		return err
	}
	if uninstall {
		base := home
		if scope == "project" {
			base = project
		}
		if err := projectTeamSkills(name, dir, base, mem, true); err != nil { // cmd_harness_team_skills.go
			return err
		}
		removed, err := harness.UnprojectSkills(dir, mem, base)
		if len(removed) > 0 {
			fmt.Fprintf(stdout, "mindmount: %s: removed %d skill %s from %s\n", name, len(removed), memgraph.Plural(len(removed), "link", "links"), dir)
		}
		return err
	}
	g, err := memgraph.Scan(mem)
	if err != nil {
		return err
	}
	var names []string
	for _, s := range g.Skills() {
		if s.Status == memgraph.SkillActive {
			names = append(names, s.Name)
		}
	}
	made, notes, err := harness.ProjectSkills(dir, mem, names)
	for _, n := range notes {
		fmt.Fprintf(stdout, "mindmount: %s: %s\n", name, n)
	}
	if len(made) > 0 {
		fmt.Fprintf(stdout, "mindmount: %s: linked %d %s into %s\n", name, len(made), memgraph.Plural(len(made), "skill", "skills"), dir)
	}
	if err != nil {
		return err
	}
	return projectTeamSkills(name, dir, "", mem, false) // cmd_harness_team_skills.go
}
