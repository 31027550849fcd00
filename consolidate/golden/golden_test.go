package golden

import (
	"bytes"
	"os/exec"
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
