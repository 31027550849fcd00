package main

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"

	"github.com/mindmount/mindmount/memgraph"
)

// skillsCommand is "mindmount skills": list, show and lint a repository's
// skills (memgraph/skill.go has the format's rules).
var skillsCommand = newCommand(command{
	name:    "skills",
	usage:   "skills list|show|lint REPO",
	summary: "list, show or lint the skills of a repository (skills/<name>/SKILL.md)",
	help: `A skill is a folder skills/<name>/ with a SKILL.md in the Agent Skills
format (frontmatter name and description, then instructions) and optional
scripts/, references/ and assets/. CONTEXT.md lists the active ones, most
used first, within skill_list_chars of .mindmount/settings (default 8000
characters); this command lists them all.

Example:

    mindmount skills list ~/memory
    mindmount skills show deploy-staging ~/memory
    mindmount skills lint ~/memory`,
	subs: []*command{
		newCommand(command{
			name:    "list",
			usage:   "skills list REPO",
			summary: "print every skill: status, uses, path and description, most used first",
			help:    `Prints one line per valid skill, any status (active, draft, retired), most used first.`,
		}, runSkillsList),
		newCommand(command{
			name:    "show",
			usage:   "skills show NAME REPO",
			summary: "print a skill's SKILL.md and the files of its folder",
			help:    `Prints skills/NAME/SKILL.md, then the files of the skill's folder with their modes.`,
		}, runSkillsShow),
		newCommand(command{
			name:    "lint",
			usage:   "skills lint REPO",
			summary: "check skills against the format and warn about risky scripts and text",
			help: `Reports, as path:line, every break of the Agent Skills rules, a SKILL.md of
500 lines or more, a list of active skills longer than the context's budget,
scripts that fetch from the network or pipe into a shell (curl … | sh, wget,
nc) and text telling the model to ignore its instructions. Exits 1 when a
rule is broken; warnings alone exit 0.`,
		}, runSkillsLint),
	},
}, runSkillsGroup)

// runSkillsGroup runs "mindmount skills" without a subcommand.
func runSkillsGroup(_ context.Context, _ *noOptions, _ []string) error { return errUsage }

func runSkillsList(_ context.Context, _ *noOptions, args []string) error {
	if len(args) != 1 {
		return errUsage
	}
	g, err := scanForOutput(args[0])
	if err != nil {
		return err
	}
	list := g.Skills()
	for _, s := range list {
		fmt.Fprintf(stdout, "%-7s %4d  %s — %s\n", s.Status, s.Uses, memgraph.SafeLine(s.Path), memgraph.SafeLine(s.Description))
	}
	if len(list) == 0 {
		fmt.Fprintln(stdout, "no skills; add one as skills/<name>/SKILL.md")
	}
	return nil
}

func runSkillsShow(_ context.Context, _ *noOptions, args []string) error {
	if len(args) != 2 {
		return errUsage
	}
	name, dir := args[0], args[1]
	if !memgraph.ValidSkillName(name) {
		return fmt.Errorf("%q is not a skill name (lower-case a-z, 0-9 and dashes)", name)
	}
	if err := requireMindmountRepo(dir); err != nil {
		return err
	}
	folder := filepath.Join(dir, memgraph.SkillsDir, name)
	data, err := os.ReadFile(filepath.Join(folder, memgraph.SkillFile))
	if err != nil {
		return fmt.Errorf("no skill %s: %w", name, err)
	}
	stdout.Write(data)
	fmt.Fprintln(stdout, "\nfiles:")
	return filepath.WalkDir(folder, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		fmt.Fprintf(stdout, "  %v %6d  %s\n", info.Mode(), info.Size(), memgraph.SafeLine(filepath.ToSlash(rel)))
		return nil
	})
}

// lintRule is one warning of "skills lint": a pattern over a line.
type lintRule struct {
	re      *regexp.Regexp
	scripts bool // only in scripts/ (the text rules apply to every file)
	msg     string
}

// lintRules are compiled on first use, not at start: every command pays
// for package initialisation, and these patterns are slow to compile.
var lintRules = sync.OnceValue(func() []lintRule {
	return []lintRule{
		{regexp.MustCompile(`(curl|wget|fetch)\b[^|]*\|\s*(sudo\s+)?(ba|z|da)?sh\b`), false, "pipes a download into a shell; vendor the script into the skill instead"},
		{regexp.MustCompile(`\b(curl|wget)\b`), true, "fetches from the network; say so in the description, or vendor what it fetches"},
		{regexp.MustCompile(`(^|[\s;|&(])(nc|ncat|netcat)\s`), true, "opens a raw network connection (nc)"},
		{regexp.MustCompile(`(?i)\b(ignore|disregard|forget)\b.{0,30}\b(previous|prior|above|earlier|all|your|system)\b.{0,20}\b(instructions?|prompts?|rules)\b`), false, "tells the model to ignore its instructions"},
	}
})

// maxSkillLines is where lint asks to move text to references/.
const maxSkillLines = 500

func runSkillsLint(_ context.Context, _ *noOptions, args []string) error {
	if len(args) != 1 {
		return errUsage
	}
	dir := args[0]
	g, err := scanForOutput(dir)
	if err != nil {
		return err
	}
	problems, warnings := 0, 0
	warn := func(rel string, line int, msg string) {
		warnings++
		fmt.Fprintf(stdout, "%s:%d: warning: %s\n", memgraph.SafeLine(rel), line, msg)
	}
	root := filepath.Join(dir, memgraph.SkillsDir)
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == root && os.IsNotExist(err) {
				return fs.SkipDir
			}
			return err
		}
		if d.IsDir() || !d.Type().IsRegular() {
			return nil
		}
		r, _ := filepath.Rel(dir, p)
		rel := filepath.ToSlash(r)
		if !memgraph.IsSkillPath(rel) {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for _, pr := range memgraph.Validate(rel, data, nil) {
			problems++
			fmt.Fprintln(stdout, pr.String())
		}
		lintText(rel, data, warn)
		return nil
	})
	if err != nil {
		return err
	}
	set, _ := g.Settings()
	if list := g.Skills(); len(list) > 0 {
		if text := memgraph.SkillsList(list, set.SkillListChars); strings.Contains(text, memgraph.SkillListHint) {
			warn(memgraph.SettingsFile, 0, "the active skills do not fit skill_list_chars; the least used are left out of CONTEXT.md (shorten descriptions, retire skills, or raise the budget)")
		}
	}
	fmt.Fprintf(stdout, "%d %s, %d %s\n", problems, memgraph.Plural(problems, "problem", "problems"), warnings, memgraph.Plural(warnings, "warning", "warnings"))
	if problems > 0 {
		return exitError{1}
	}
	return nil
}

// lintText warns about one file's lines: length of SKILL.md, network use
// in scripts, text against the model's instructions.
func lintText(rel string, data []byte, warn func(rel string, line int, msg string)) {
	lines := strings.Split(string(data), "\n")
	if memgraph.IsSkillFile(rel) && len(lines) > maxSkillLines {
		warn(rel, maxSkillLines, fmt.Sprintf("SKILL.md has %d lines; keep it under %d and move details to references/", len(lines)-1, maxSkillLines))
	}
	script := strings.Contains(rel, "/scripts/")
	for i, line := range lines {
		for _, r := range lintRules() {
			if (!r.scripts || script) && r.re.MatchString(line) {
				warn(rel, i+1, r.msg)
				break
			}
		}
	}
}
