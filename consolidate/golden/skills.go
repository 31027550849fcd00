package golden

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/mindmount/mindmount/consolidate"
	"github.com/mindmount/mindmount/consolidate/llmtest"
	"github.com/mindmount/mindmount/fs/gitrepo"
	"github.com/mindmount/mindmount/fs/tracker"
	"github.com/mindmount/mindmount/memgraph"
)

// The skill cases: a workflow the user walks through three times becomes
// one skill, a draft; a one-off task is no skill; a correction to a known
// procedure updates that skill instead of adding a second. The scripted
// model answers as a good model would (ScriptSkill), and the outcome is
// read back from the repository, so a consolidator that drops a skill,
// writes a second one or loses the corrected step fails the case.

// SkillScenario is one golden skill case.
type SkillScenario struct {
	Name     string
	Existing string   // a SKILL.md already committed at skills/<its name>/, or ""
	Say      []string // the user's messages, in order
	// Marker is the step that shows the workflow: the scripted model
	// proposes a skill when the transcript shows it three times, or when
	// the transcript corrects a skill the prompt lists (matched by Topic).
	Marker, Topic string
	Skill         consolidate.SkillDraft // the skill a good model writes (its name when no known skill matches)
	// Outcome: how many skill folders HEAD holds afterwards, and for the
	// skill that must exist: its name, status, a step its body must hold
	// and one it must no longer hold.
	WantSkills int
	WantName   string
	WantStatus memgraph.SkillStatus
	WantStep   string
	GoneStep   string
}

var deploySteps = "1. Run `make build`.\n2. Run `make migrate ENV=staging`.\n3. Open /health and check it says ok."

// SkillScenarios are the built-in skill cases.
var SkillScenarios = []SkillScenario{
	{Name: "workflow shown three times", Marker: "make migrate ENV=staging", Topic: "staging",
		Say: []string{
			"Deploying to staging: make build, then make migrate ENV=staging, then check /health.",
			"Staging again today: make build, make migrate ENV=staging, /health looks ok.",
			"Third deploy this week, same as always: make build, make migrate ENV=staging, check /health.",
		},
		Skill:      consolidate.SkillDraft{Name: "deploy-staging", Description: "Deploy the app to staging: build, migrate, check health.", Body: "# Deploy to staging\n\n" + deploySteps},
		WantSkills: 1, WantName: "deploy-staging", WantStatus: memgraph.SkillDraft, WantStep: "make migrate ENV=staging"},
	{Name: "a one-off is not a skill", Marker: "zip report.txt", Topic: "report",
		Say:        []string{"Just this once: rename report.txt, zip report.txt and mail it to Ana."},
		Skill:      consolidate.SkillDraft{Name: "mail-report", Description: "Mail the report.", Body: "1. Rename.\n2. Zip.\n3. Mail."},
		WantSkills: 0},
	{Name: "a correction updates the skill", Marker: "make migrate ENV=staging", Topic: "staging",
		Existing: "---\nname: deploy-staging\ndescription: Deploy the app to staging.\nmetadata:\n  mindmount-status: active\n---\n\n1. Run `make build`.\n2. Run `make deploy ENV=staging`.\n",
		Say:      []string{"Correction for deploying to staging: no more make deploy; run make migrate ENV=staging after the build, then check /health."},
		Skill: consolidate.SkillDraft{Name: "staging-deploy", Description: "Deploy the app to staging: build, migrate, check health.",
			Body: "# Deploy to staging\n\n" + deploySteps},
		WantSkills: 1, WantName: "deploy-staging", WantStatus: memgraph.SkillActive, WantStep: "make migrate ENV=staging", GoneStep: "make deploy ENV=staging"},
}

// ScriptSkill is the scripted model's skill answer to an extraction
// prompt: a skill that corrects a known one keeps its name (the prompt's
// list of existing skills, matched by topic); a new one needs the
// workflow three times in the transcript; otherwise none.
func ScriptSkill(prompt string, sc SkillScenario) []consolidate.SkillDraft {
	text, known, _ := strings.Cut(prompt, "Skills already in the memory")
	sk := sc.Skill
	for _, line := range strings.Split(known, "\n") {
		name, desc, ok := strings.Cut(strings.TrimPrefix(line, "- "), ": ")
		if ok && strings.HasPrefix(line, "- ") && strings.Contains(strings.ToLower(desc), sc.Topic) && strings.Contains(text, sc.Marker) {
			sk.Name = name
			return []consolidate.SkillDraft{sk}
		}
	}
	if strings.Count(text, sc.Marker) >= 3 {
		return []consolidate.SkillDraft{sk}
	}
	return nil
}

// SkillResult is the outcome of one skill case.
type SkillResult struct {
	Scenario SkillScenario
	Skills   []string // skill folders in HEAD afterwards
	Status   memgraph.SkillStatus
	HasStep  bool // the wanted skill's body holds WantStep
	HasGone  bool // ... and still holds GoneStep
	Err      string
}

// OK reports whether the case met its goal.
func (r SkillResult) OK() bool {
	sc := r.Scenario
	if r.Err != "" || len(r.Skills) != sc.WantSkills {
		return false
	}
	if sc.WantSkills == 0 {
		return true
	}
	return r.Skills[0] == memgraph.SkillsDir+"/"+sc.WantName && r.Status == sc.WantStatus && r.HasStep && !r.HasGone
}

// RunSkills plays every skill case in its own repository under tmp.
func RunSkills(ctx context.Context, tmp string, opt Options) []SkillResult {
	var out []SkillResult
	for i, sc := range SkillScenarios {
		r, err := runSkill(ctx, filepath.Join(tmp, fmt.Sprintf("skill-%d", i)), sc, opt)
		if err != nil {
			r.Err = err.Error()
		}
		out = append(out, r)
	}
	return out
}

func runSkill(ctx context.Context, dir string, sc SkillScenario, opt Options) (SkillResult, error) {
	res := SkillResult{Scenario: sc}
	r, g, err := skillRepo(ctx, dir, sc)
	if err != nil {
		return res, err
	}
	defer g.Close()
	srv, p, stop := scripted(opt.Provider)
	defer stop()
	srv.Handle(func(c llmtest.Call) llmtest.Reply {
		if c.Kind != llmtest.KindExtract {
			return llmtest.Reply{Content: `{"decisions":[]}`}
		}
		return llmtest.Reply{Content: llmtest.JSON(map[string]any{"facts": []consolidate.Fact{}, "skills": ScriptSkill(c.Prompt, sc)})}
	})
	c := consolidate.New(tracker.New(g, r, tracker.Config{Logger: discard}), p, consolidate.Config{Now: func() time.Time { return when }, Logger: discard})
	if _, err := c.Run(ctx); err != nil {
		return res, err
	}
	return readSkills(r, res)
}

// skillRepo makes the case's repository: the existing skill committed,
// the transcript in the inbox.
func skillRepo(ctx context.Context, dir string, sc SkillScenario) (*gitrepo.Repo, *memgraph.Graph, error) {
	files := map[string]string{
		".gitignore":   "/transcripts/*\n",
		"user.md":      "---\ndescription: Who the user is\n---\n# User\n",
		"character.md": "---\ndescription: The assistant\n---\n# Character\n",
	}
	if sc.Existing != "" {
		s, _ := memgraph.ParseSkill(memgraph.SkillPath("x"), []byte(sc.Existing))
		files[memgraph.SkillPath(s.Name)] = sc.Existing
	}
	var lines strings.Builder
	for _, say := range sc.Say {
		fmt.Fprintf(&lines, "{\"role\":\"user\",\"content\":%q}\n{\"role\":\"assistant\",\"content\":\"Done.\"}\n", say)
	}
	r, err := seedRepo(ctx, dir, files, lines.String())
	if err != nil {
		return nil, nil, err
	}
	g, err := memgraph.Scan(dir)
	return r, g, err
}

// readSkills fills res from the skills HEAD holds.
func readSkills(r *gitrepo.Repo, res SkillResult) (SkillResult, error) {
	files, err := r.HeadFiles(memgraph.SkillsDir)
	if err != nil {
		return res, err
	}
	for _, f := range files {
		if !memgraph.IsSkillFile(f) {
			continue
		}
		res.Skills = append(res.Skills, memgraph.SkillDirOf(f))
		if memgraph.SkillDirOf(f) != memgraph.SkillsDir+"/"+res.Scenario.WantName {
			continue
		}
		data, _, err := r.ReadHead(f)
		if err != nil {
			return res, err
		}
		s, _ := memgraph.ParseSkill(f, data)
		res.Status = s.Status
		res.HasStep = res.Scenario.WantStep != "" && strings.Contains(s.Body, res.Scenario.WantStep)
		res.HasGone = res.Scenario.GoneStep != "" && strings.Contains(s.Body, res.Scenario.GoneStep)
	}
	return res, nil
}

// WriteSkillsText prints one line per skill case.
func WriteSkillsText(w io.Writer, label string, rs []SkillResult) {
	fmt.Fprintf(w, "skills (%s): %d cases\n", label, len(rs))
	for _, r := range rs {
		mark := "ok  "
		if !r.OK() {
			mark = "MISS"
		}
		fmt.Fprintf(w, "  %s %-38s skills=%v status=%s step=%v old-step=%v", mark, r.Scenario.Name, r.Skills, r.Status, r.HasStep, r.HasGone)
		if r.Err != "" {
			fmt.Fprintf(w, " error: %s", r.Err)
		}
		fmt.Fprintln(w)
	}
}
