package consolidate

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mindmount/mindmount/consolidate/llmtest"
	"github.com/mindmount/mindmount/memgraph"
)

var deploySkill = SkillDraft{Name: "deploy-staging", Description: "Deploy the app to staging: build, migrate, smoke-test.",
	Body: "# Deploy to staging\n\n1. Run `make build`.\n2. Run `make migrate ENV=staging`.\n3. Open /health and check it says ok."}

// scriptSkills queues one extraction answer with facts and skills, and a
// decision answer when decisions is not nil.
func (e *env) scriptSkills(facts []Fact, skills []SkillDraft, decisions []Decision) {
	if facts == nil {
		facts = []Fact{}
	}
	e.srv.Queue(llmtest.KindExtract, llmtest.Reply{Content: llmtest.JSON(map[string]any{"facts": facts, "skills": skills})})
	if decisions != nil {
		e.srv.Queue(llmtest.KindDecide, llmtest.Reply{Content: llmtest.JSON(map[string]any{"decisions": decisions})})
	}
}

// setOperator writes the test repository's operator file.
func (e *env) setOperator(text string) {
	e.t.Helper()
	p := filepath.Join(e.r.GitDir(), filepath.FromSlash(memgraph.OperatorFile))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		e.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		e.t.Fatal(err)
	}
}

// headSkill parses the SKILL.md of name as HEAD holds it.
func (e *env) headSkill(name string) *memgraph.Skill {
	e.t.Helper()
	rel := memgraph.SkillPath(name)
	data, ok, err := e.r.ReadHead(rel)
	if err != nil || !ok {
		e.t.Fatalf("%s not in HEAD: %v", rel, err)
	}
	s, probs := memgraph.ParseSkill(rel, data)
	if len(probs) > 0 {
		e.t.Fatalf("%s invalid: %v\n%s", rel, probs, data)
	}
	return s
}

func TestLearnedSkillIsADraftInTheChunksCommit(t *testing.T) {
	e := newEnv(t, "ollama", nil)
	e.addTranscript("transcripts/s1.jsonl", jsonl("How do I deploy to staging again?", "Build, migrate, then check /health.", "Right, and I keep a cat."))
	e.scriptSkills([]Fact{{Kind: "user", Slug: "has-a-cat", Description: "Has a cat", Fact: "You have a cat."}},
		[]SkillDraft{deploySkill}, []Decision{{Fact: 0, Action: ActionAdd}})
	rep := e.run()
	if len(rep.Problems) != 0 || len(rep.Skills) != 1 || rep.Skills[0] != "skills/deploy-staging/SKILL.md" {
		t.Fatalf("report %+v", rep)
	}
	s := e.headSkill("deploy-staging")
	if s.Status != memgraph.SkillDraft || s.Source != rep.Sources[0] || s.Description != deploySkill.Description ||
		!strings.Contains(s.Body, "make migrate ENV=staging") {
		t.Fatalf("skill %+v", s)
	}
	// One commit on the dream holds the memory, the skill and the cursor.
	files := e.git("show", "--name-only", "--format=", "HEAD^2")
	for _, want := range []string{"user_memory/has-a-cat.md", "skills/deploy-staging/SKILL.md", CursorFile} {
		if !strings.Contains(files, want) {
			t.Fatalf("the chunk's commit lacks %s:\n%s", want, files)
		}
	}
	e.checkGit()
}

func TestLearnedSkillActiveWhenOperatorSaysAuto(t *testing.T) {
	e := newEnv(t, "ollama", nil)
	e.setOperator("skills: auto\n")
	e.restart()
	e.addTranscript("transcripts/s1.jsonl", jsonl("Deploy to staging like always."))
	e.scriptSkills(nil, []SkillDraft{deploySkill}, nil)
	e.run()
	if s := e.headSkill("deploy-staging"); s.Status != memgraph.SkillActive {
		t.Fatalf("status %q under skills: auto", s.Status)
	}
	e.setOperator("skills: review\n")
	e.restart()
	e.addTranscript("transcripts/s2.jsonl", jsonl("Release the same way each time."))
	e.scriptSkills(nil, []SkillDraft{{Name: "release", Description: "Cut a release.", Body: "1. Tag.\n2. Push the tag."}}, nil)
	e.run()
	if s := e.headSkill("release"); s.Status != memgraph.SkillDraft {
		t.Fatalf("status %q under skills: review", s.Status)
	}
}

func TestLearnedSkillUpdatesTheExistingOne(t *testing.T) {
	old := "---\nname: deploy-staging\ndescription: Deploy to staging.\nlicense: MIT\nmetadata:\n  mindmount-status: active\n  owner: ops\n---\n\n1. Run `make deploy`.\n"
	e := newEnv(t, "ollama", map[string]string{"skills/deploy-staging/SKILL.md": old})
	e.addTranscript("transcripts/s1.jsonl", jsonl("Careful: migrate before the smoke test now."))
	e.scriptSkills(nil, []SkillDraft{deploySkill}, nil)
	rep := e.run()
	if len(rep.Problems) != 0 {
		t.Fatalf("problems %v", rep.Problems)
	}
	// The model was shown the existing skill, to reuse its name.
	if p := e.srv.CallsOf(llmtest.KindExtract)[0].Prompt; !strings.Contains(p, "- deploy-staging: Deploy to staging.") {
		t.Fatalf("the extraction prompt does not list the existing skill:\n%s", p)
	}
	s := e.headSkill("deploy-staging")
	if s.Status != memgraph.SkillActive || s.License != "MIT" || s.Metadata["owner"] != "ops" || s.Source != rep.Sources[0] {
		t.Fatalf("the update lost the skill's keys: %+v", s)
	}
	if strings.Contains(s.Body, "make deploy`") || !strings.Contains(s.Body, "make migrate ENV=staging") || s.Description != deploySkill.Description {
		t.Fatalf("body not replaced: %q", s.Body)
	}
	if got := strings.Fields(e.git("ls-tree", "--name-only", "HEAD", "skills/")); len(got) != 1 || got[0] != "skills/deploy-staging" {
		t.Fatalf("skill folders %v, want one", got)
	}
}

func TestLearnedSkillRefusedIsAProblem(t *testing.T) {
	for _, name := range []string{"Deploy_Staging", "../evil", "deploy--staging", strings.Repeat("a", 65), ""} {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t, "ollama", nil)
			e.addTranscript("transcripts/s1.jsonl", jsonl("Deploy to staging."))
			e.scriptSkills(nil, []SkillDraft{{Name: name, Description: "d", Body: "1. step"}}, nil)
			rep := e.run()
			if len(rep.Skills) != 0 || len(rep.Problems) != 1 || !strings.Contains(rep.Problems[0], "skill") {
				t.Fatalf("report %+v", rep)
			}
			if got := e.git("ls-tree", "-r", "--name-only", "HEAD"); strings.Contains(got, "SKILL.md") || strings.Contains(got, "evil") {
				t.Fatalf("a refused skill was committed:\n%s", got)
			}
			if len(rep.Sources) != 1 {
				t.Fatalf("the chunk was not consumed: %+v", rep)
			}
			e.checkGit()
		})
	}
}

func TestLearnedSkillUnderReview(t *testing.T) {
	e := newEnv(t, "ollama", nil)
	e.setMerge("review")
	e.restart()
	e.addTranscript("transcripts/s1.jsonl", jsonl("Deploy to staging."))
	e.scriptSkills(nil, []SkillDraft{deploySkill}, nil)
	if rep := e.run(); len(rep.Pending) != 1 {
		t.Fatalf("report %+v", rep)
	}
	if e.exists("skills/deploy-staging/SKILL.md") {
		t.Fatal("a skill under review reached main")
	}
	if _, err := e.c.Approve(context.Background(), 1, e.tip(1)); err != nil {
		t.Fatal(err)
	}
	if s := e.headSkill("deploy-staging"); s.Status != memgraph.SkillDraft || !e.exists("skills/deploy-staging/SKILL.md") {
		t.Fatalf("approved skill %+v", s)
	}

	e.addTranscript("transcripts/s2.jsonl", jsonl("Release like this."))
	e.scriptSkills(nil, []SkillDraft{{Name: "release", Description: "Cut a release.", Body: "1. Tag.\n2. Push."}}, nil)
	e.run()
	if _, err := e.c.Reject(context.Background(), 2, "not a workflow"); err != nil {
		t.Fatal(err)
	}
	if e.exists("skills/release") || strings.Contains(e.git("ls-tree", "-r", "--name-only", "HEAD"), "skills/release") {
		t.Fatal("a rejected skill left a trace")
	}
	e.checkGit()
}

func TestParseSkills(t *testing.T) {
	for _, c := range []struct {
		answer      string
		skills, bad int
	}{
		{`{"facts":[]}`, 0, 0},
		{`{"facts":[],"skills":null}`, 0, 0},
		{`{"facts":[],"skills":{}}`, 0, 1},
		{`{"facts":[],"skills":[{"name":"a","description":"d","body":"b"}]}`, 1, 0},
		{`{"facts":[],"skills":[{"name":"a","description":"d","body":"  "}]}`, 0, 1},
		{`{"facts":[],"skills":[{"name":"a","body":"b"}]}`, 0, 1},
		{`{"facts":[],"skills":[1,{"name":"a","description":"d","body":"b"},{"name":"b","description":"d","body":"b"},{"name":"c","description":"d","body":"b"},{"name":"d","description":"d","body":"b"}]}`, 3, 2},
	} {
		sk, probs := ParseSkills(c.answer)
		if len(sk) != c.skills || len(probs) != c.bad {
			t.Errorf("%s: %d skills %v problems, want %d and %d", c.answer, len(sk), probs, c.skills, c.bad)
		}
	}
}

func FuzzParseSkills(f *testing.F) {
	f.Add(`{"facts":[],"skills":[{"name":"a","description":"d","body":"b"}]}`)
	f.Add(`{"skills":[{"name":"a","description":"d","body":"b","files":[{"path":"scripts/x.sh","content":"echo","executable":true},{"path":"../x","content":""}]}]}`)
	f.Add(`{"skills":[{"name":"\u0000x","description":"` + strings.Repeat("é", 30) + `","body":"---\n# h"}]}`)
	f.Fuzz(func(t *testing.T, answer string) {
		sk, _ := ParseSkills(answer)
		if len(sk) > MaxSkills {
			t.Fatalf("%d skills", len(sk))
		}
		for _, s := range sk {
			if s.Body == "" || len([]rune(s.Body)) > MaxSkillBodyText || strings.ContainsRune(s.Name, 0) || len(s.Files) > MaxSkillFiles {
				t.Fatalf("skill %+v", s)
			}
			for _, f := range s.Files {
				if checkSkillFilePath(f.Path) != nil || len(f.Content) > MaxSkillFileText+1 || strings.ContainsRune(f.Content, 0) ||
					f.Executable && !strings.HasPrefix(f.Path, "scripts/") || strings.Contains(f.Path, "..") {
					t.Fatalf("file %+v", f)
				}
			}
		}
	})
}

// TestLearnedSkillCarriesNoSecret: a key the model puts into a skill is
// redacted before the file is written; git never holds it.
func TestLearnedSkillCarriesNoSecret(t *testing.T) {
	e := newEnv(t, "ollama", nil)
	e.addTranscript("transcripts/s1.jsonl", jsonl("Deploy to staging."))
	sk := deploySkill
	sk.Body += "\n4. Export OPENAI_API_KEY=" + plantedKey + " first."
	sk.Description += " Uses " + plantedAWS + "."
	e.scriptSkills(nil, []SkillDraft{sk}, nil)
	rep := e.run()
	if rep.Redactions < 2 || len(rep.Skills) != 1 {
		t.Fatalf("report %+v", rep)
	}
	all := e.git("log", "-p", "--all")
	if strings.Contains(all, plantedKey) || strings.Contains(all, plantedAWS) {
		t.Fatal("a secret from the model reached git in a skill")
	}
	if s := e.headSkill("deploy-staging"); !strings.Contains(s.Body, "[REDACTED") {
		t.Fatalf("body %q", s.Body)
	}
}
