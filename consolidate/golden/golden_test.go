package golden

import (
	"bytes"
	"os/exec"
	"strings"
	"testing"
)

// TestGoldenScenarios: through its topic, the old memory is offered,
// retired and linked, for every scenario and both providers; the converse
// leaves the unrelated memory alone.
func TestGoldenScenarios(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git CLI not installed")
	}
	for _, provider := range []string{"ollama", "openai"} {
		t.Run(provider, func(t *testing.T) {
			rs, err := Run(t.Context(), t.TempDir(), Options{Provider: provider})
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range rs {
				if !r.OK() {
					t.Errorf("%s: %+v", r.Scenario.Name, r)
				}
			}
			var b bytes.Buffer
			WriteText(&b, provider, rs)
			if s := Summarize(rs); !s.Pass() || s.Contradictions != 5 || s.Converse != 1 {
				t.Errorf("summary %+v\n%s", s, b.String())
			}
		})
	}
}

// TestWithoutTopicsAsBefore: an extraction answer without topics or search
// terms behaves as before topics existed: recall alone cannot find most
// memories that share no word with the fact, so the contradictions are
// missed — the failure issue 15 fixes — and nothing fails. Keyword recall
// now also reads a memory's file name, which offers one scenario's memory
// (reply-style) without a topic; the model, asked without topics, still
// leaves it.
func TestWithoutTopicsAsBefore(t *testing.T) {
	rs, err := Run(t.Context(), t.TempDir(), Options{NoTopics: true})
	if err != nil {
		t.Fatal(err)
	}
	s := Summarize(rs)
	if s.Failed != 0 || s.Offered > 1 || s.LeftActive != s.Contradictions || s.WronglyChanged != 0 {
		var b bytes.Buffer
		WriteText(&b, "no topics", rs)
		t.Fatalf("summary %+v\n%s", s, b.String())
	}
}

func TestDecide(t *testing.T) {
	prompt := "<fact number=\"0\" kind=\"user\">\ncandidates:\n- path: user_memory/a\n  offered because: search match\n- path: user_memory/b\n  offered because: same topic diet, search match\n</fact>\n" +
		"<fact number=\"1\" kind=\"user\">\ncandidates: none\n</fact>\n"
	ds := Decide(prompt)
	if len(ds) != 2 || ds[0].Action != "DELETE" || ds[0].Target != "user_memory/b" || ds[1].Action != "ADD" {
		t.Fatalf("%+v", ds)
	}
}

// TestGoldenSkills: a workflow shown three times becomes one skill, a
// draft holding its steps; a one-off is no skill; a correction updates the
// known skill (one folder, the corrected step in, the old one out), for
// both providers.
func TestGoldenSkills(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git CLI not installed")
	}
	for _, provider := range []string{"ollama", "openai"} {
		t.Run(provider, func(t *testing.T) {
			rs := RunSkills(t.Context(), t.TempDir(), Options{Provider: provider})
			var b bytes.Buffer
			WriteSkillsText(&b, provider, rs)
			if len(rs) != len(SkillScenarios) {
				t.Fatalf("%d results\n%s", len(rs), b.String())
			}
			for _, r := range rs {
				if !r.OK() {
					t.Errorf("%s: %+v\n%s", r.Scenario.Name, r, b.String())
				}
			}
		})
	}
}

// TestScriptSkill: the scripted model keeps a known skill's name for a
// correction, needs a workflow three times for a new skill, and returns
// nothing for a one-off.
func TestScriptSkill(t *testing.T) {
	three, oneOff, fix := SkillScenarios[0], SkillScenarios[1], SkillScenarios[2]
	if got := ScriptSkill(strings.Repeat(three.Marker+"\n", 3), three); len(got) != 1 || got[0].Name != "deploy-staging" {
		t.Fatalf("three times: %+v", got)
	}
	if got := ScriptSkill(strings.Repeat(three.Marker+"\n", 2), three); got != nil {
		t.Fatalf("twice: %+v", got)
	}
	if got := ScriptSkill(oneOff.Marker, oneOff); got != nil {
		t.Fatalf("one-off: %+v", got)
	}
	known := fix.Marker + "\n\nSkills already in the memory (...):\n- deploy-staging: Deploy the app to staging.\n"
	if got := ScriptSkill(known, fix); len(got) != 1 || got[0].Name != "deploy-staging" {
		t.Fatalf("correction with the list: %+v", got)
	}
	if got := ScriptSkill(fix.Marker, fix); got != nil {
		t.Fatalf("correction without the list: %+v", got)
	}
}
