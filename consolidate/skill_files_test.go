package consolidate

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mindmount/mindmount/consolidate/llmtest"
)

// TestLearnedSkillScriptKeepsItsBit: a drafted skill's script is committed
// with mode 100755 on the dream and, approved, in HEAD and the work tree
// (which the mount passes through); a reference stays 100644 even when the
// model calls it executable; a file outside the format's folders is
// skipped and reported, never written.
func TestLearnedSkillScriptKeepsItsBit(t *testing.T) {
	e := newEnv(t, "ollama", nil)
	e.setMerge("review")
	e.restart()
	e.addTranscript("transcripts/s1.jsonl", jsonl("Deploy to staging with the script, as always."))
	sk := deploySkill
	sk.Files = []SkillFile{
		{Path: "scripts/deploy.sh", Content: "#!/bin/sh\nset -e\nmake build\nmake migrate ENV=staging\n", Executable: true},
		{Path: "references/checklist.md", Content: "# Checklist\n\n- /health says ok", Executable: true},
	}
	answer := map[string]any{"facts": []Fact{}, "skills": []any{sk}}
	raw := `{"name":"deploy-staging","description":"d","body":"b","files":[{"path":"../../user.md","content":"x","executable":false}]}`
	e.scriptAnswer(answer, raw)
	rep := e.run()
	if len(rep.Pending) != 1 || len(rep.Skills) != 1 {
		t.Fatalf("report %+v", rep)
	}
	if !strings.Contains(strings.Join(rep.Problems, "\n"), "../../user.md") {
		t.Fatalf("the file outside the skill is not reported: %v", rep.Problems)
	}
	if _, err := e.c.Approve(context.Background(), 1, e.tip(1)); err != nil {
		t.Fatal(err)
	}
	tree := e.git("ls-tree", "-r", "HEAD", "skills/deploy-staging/")
	for _, want := range []string{"100755 blob", "scripts/deploy.sh", "100644 blob"} {
		if !strings.Contains(tree, want) {
			t.Fatalf("ls-tree lacks %q:\n%s", want, tree)
		}
	}
	for _, line := range strings.Split(tree, "\n") {
		if strings.HasSuffix(line, "scripts/deploy.sh") != strings.HasPrefix(line, "100755 ") {
			t.Errorf("mode of %q", line)
		}
	}
	st, err := os.Stat(filepath.Join(e.dir, "skills", "deploy-staging", "scripts", "deploy.sh"))
	if err != nil || st.Mode().Perm()&0o100 == 0 {
		t.Fatalf("script in the work tree: %v %v; want it executable", st, err)
	}
	if got := e.read("skills/deploy-staging/references/checklist.md"); got != "# Checklist\n\n- /health says ok\n" {
		t.Fatalf("reference %q", got)
	}
	if strings.Contains(e.git("ls-tree", "-r", "--name-only", "HEAD"), "skills/deploy-staging/user.md") || e.read("user.md") != "---\ndescription: Who the user is\n---\n# User\n" {
		t.Fatal("a learned file escaped its folder")
	}
	e.checkGit()
}

// TestLearnedSkillFileSecretRedacted: a key in a learned script is
// redacted before the file is written; git never holds it.
func TestLearnedSkillFileSecretRedacted(t *testing.T) {
	e := newEnv(t, "ollama", nil)
	e.addTranscript("transcripts/s1.jsonl", jsonl("Deploy to staging."))
	sk := deploySkill
	sk.Files = []SkillFile{{Path: "scripts/deploy.sh", Content: "#!/bin/sh\nexport OPENAI_API_KEY=" + plantedKey + "\n", Executable: true}}
	e.scriptSkills(nil, []SkillDraft{sk}, nil)
	e.run()
	if strings.Contains(e.git("log", "-p", "--all"), plantedKey) {
		t.Fatal("a secret from the model reached git in a skill's script")
	}
	if !strings.Contains(e.git("show", "HEAD:skills/deploy-staging/scripts/deploy.sh"), "[REDACTED") {
		t.Fatal("the script was not written redacted")
	}
}

// scriptAnswer queues one extraction answer: answer with the raw JSON
// skill items appended to its "skills".
func (e *env) scriptAnswer(answer map[string]any, raw ...string) {
	s := llmtest.JSON(answer)
	if len(raw) > 0 {
		i := strings.LastIndex(s, "]")
		s = s[:i] + "," + strings.Join(raw, ",") + s[i:]
	}
	e.srv.Queue(llmtest.KindExtract, llmtest.Reply{Content: s})
}

func TestCheckSkillFilePath(t *testing.T) {
	for p, ok := range map[string]bool{
		"scripts/deploy.sh":                   true,
		"references/api/notes.md":             true,
		"assets/form.txt":                     true,
		"scripts":                             false,
		"deploy.sh":                           false,
		"SKILL.md":                            false,
		"other/x.sh":                          false,
		"scripts/../SKILL.md":                 false,
		"scripts/./x":                         false,
		"scripts//x":                          false,
		"scripts/.hidden":                     false,
		"/scripts/x":                          false,
		"scripts/a/b/c":                       false,
		"scripts/a\u2028b":                    false,
		"scripts/a\\b":                        false,
		"scripts/" + strings.Repeat("x", 130): false,
	} {
		if err := checkSkillFilePath(p); (err == nil) != ok {
			t.Errorf("%q: %v, want ok %v", p, err, ok)
		}
	}
}

func TestParseSkillFiles(t *testing.T) {
	item := func(files string) string {
		return `{"skills":[{"name":"a","description":"d","body":"b","files":` + files + `}]}`
	}
	five := `[{"path":"scripts/a","content":"x","executable":true},{"path":"scripts/b","content":"x"},{"path":"scripts/c","content":"x"},{"path":"scripts/d","content":"x"},{"path":"scripts/e","content":"x"}]`
	for _, c := range []struct {
		answer      string
		files, bad  int
		execOfFirst bool
	}{
		{item(`[]`), 0, 0, false},
		{item(`null`), 0, 0, false},
		{item(`{}`), 0, 1, false},
		{item(`[{"path":"scripts/run.sh","content":"echo","executable":true}]`), 1, 0, true},
		{item(`[{"path":"assets/x","content":"echo","executable":true}]`), 1, 0, false},
		{item(`[{"path":"scripts/run.sh","content":"a"},{"path":"scripts/run.sh","content":"b"}]`), 1, 1, false},
		{item(`[{"path":"scripts/x","content":"` + strings.Repeat("y", MaxSkillFileText+1) + `"}]`), 0, 1, false},
		{item(`[{"path":"scripts/x","content":"a\u0000b"}]`), 0, 1, false},
		{item(`[{"path":"scripts/x"}]`), 0, 1, false},
		{item(`[{"path":"scripts/x","content":"a","executable":"yes"}]`), 0, 1, false},
		{item(five), MaxSkillFiles, 1, true},
	} {
		sk, probs := ParseSkills(c.answer)
		if len(sk) != 1 || len(sk[0].Files) != c.files || len(probs) != c.bad {
			t.Errorf("%.120s: %+v %v, want %d files and %d problems", c.answer, sk, probs, c.files, c.bad)
			continue
		}
		if c.files > 0 && sk[0].Files[0].Executable != c.execOfFirst {
			t.Errorf("%.120s: executable %v", c.answer, sk[0].Files[0].Executable)
		}
	}
}
