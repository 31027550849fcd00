package github_test

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rhysd/actionlint"
)

// lint runs actionlint over workflow in a project whose root holds the
// repository's action.yml, so "uses: ./" is checked against its inputs.
func lint(t *testing.T, workflow string) []*actionlint.Error {
	t.Helper()
	action, err := os.ReadFile("../../action.yml")
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	wf := filepath.Join(root, ".github", "workflows", "mindmount.yml")
	os.MkdirAll(filepath.Dir(wf), 0o755)
	os.WriteFile(filepath.Join(root, "action.yml"), action, 0o644)
	os.WriteFile(wf, []byte(workflow), 0o644)
	l, err := actionlint.NewLinter(io.Discard, &actionlint.LinterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	proj, err := actionlint.NewProject(root)
	if err != nil {
		t.Fatal(err)
	}
	errs, err := l.LintFile(wf, proj)
	if err != nil {
		t.Fatal(err)
	}
	return errs
}

// example is the example workflow using the action of this repository.
func example(t *testing.T) string {
	data, err := os.ReadFile("../../examples/github/mindmount.yml")
	if err != nil {
		t.Fatal(err)
	}
	return strings.ReplaceAll(string(data), "mindmount/mindmount@main", "./")
}

// TestActionAndExampleLint: the example workflow and the composite
// action pass actionlint, and the ingest job is serialized by a
// concurrency group and runs only for merged pull requests.
func TestActionAndExampleLint(t *testing.T) {
	wf := example(t)
	for _, e := range lint(t, wf) {
		t.Errorf("actionlint: %s:%d:%d: %s [%s]", filepath.Base(e.Filepath), e.Line, e.Column, e.Message, e.Kind)
	}
	w, errs := actionlint.Parse([]byte(wf))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	ingest := w.Jobs["ingest"]
	if ingest == nil || ingest.Concurrency == nil || ingest.Concurrency.Group == nil || ingest.Concurrency.Group.Value == "" {
		t.Fatalf("the ingest job has no concurrency group")
	}
	if ingest.If == nil || !strings.Contains(ingest.If.Value, "merged") {
		t.Errorf("the ingest job does not require a merged pull request: %v", ingest.If)
	}
	for _, want := range []string{"types: [opened, closed]", "issues:", "secrets.OPENAI_API_KEY"} {
		if !strings.Contains(wf, want) {
			t.Errorf("the example lacks %q", want)
		}
	}
}

// TestActionInputsChecked: the lint really reads action.yml: a step
// without the required mode input, or with an unknown input, fails.
func TestActionInputsChecked(t *testing.T) {
	wf := strings.Replace(example(t), "mode: recall", "mood: recall", 1)
	errs := lint(t, wf)
	var msgs []string
	for _, e := range errs {
		msgs = append(msgs, e.Message)
	}
	all := strings.Join(msgs, "\n")
	if !strings.Contains(all, "mode") || !strings.Contains(all, "mood") {
		t.Fatalf("want errors about the missing mode and the unknown mood, got:\n%s", all)
	}
}
