package host

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mindmount/mindmount/memgraph"
)

// TestREADMEConfigKeys: every configuration key the README (README.md and
// the pages under docs/) names is read
// where the README says: the operator's keys by ParseOperator (the local
// .git/mindmount/config, ROOT/config) and refused in the tracked
// .mindmount/settings; the repository's settings by ParseSettings and
// refused in the operator's file. A key added to either parser must be
// added here, and so named in the README.
func TestREADMEConfigKeys(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	pages, _ := filepath.Glob("../../docs/*.md")
	for _, p := range pages {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		readme = append(readme, b...)
	}
	const operator, settings = "operator", "settings"
	for _, c := range []struct {
		key, line, reader string
		where             []string // how the README names the file that holds it
		set               func(memgraph.Operator, memgraph.Settings) bool
	}{
		{"commit_secrets", "commit_secrets: true", operator, []string{".git/mindmount/config", "ROOT/config"},
			func(o memgraph.Operator, _ memgraph.Settings) bool { return o.CommitSecrets }},
		{"merge", "merge: review", operator, []string{".git/mindmount/config", "ROOT/config"},
			func(o memgraph.Operator, _ memgraph.Settings) bool { return o.Merge == memgraph.MergeReview }},
		{"skills", "skills: auto", operator, []string{".git/mindmount/config", "ROOT/config"},
			func(o memgraph.Operator, _ memgraph.Settings) bool { return o.Skills == memgraph.MergeAuto }},
		{"tree_limit_mib", "tree_limit_mib: 2048", operator, []string{".git/mindmount/config", "ROOT/config"},
			func(o memgraph.Operator, _ memgraph.Settings) bool { return o.TreeLimit() == 2048<<20 }},
		{"skill_list_chars", "skill_list_chars: 4000", settings, []string{".mindmount/settings"},
			func(_ memgraph.Operator, s memgraph.Settings) bool { return s.SkillListChars == 4000 }},
		{"index_tokens", "index_tokens: 3000", settings, []string{".mindmount/settings"},
			func(_ memgraph.Operator, s memgraph.Settings) bool { return s.IndexTokens == 3000 }},
		{"transcript_retention", "transcript_retention: 720h", settings, []string{".mindmount/settings"},
			func(_ memgraph.Operator, s memgraph.Settings) bool { return s.TranscriptRetention > 0 }},
		{"hook_read_mib", "hook_read_mib: 8", settings, []string{".mindmount/settings"},
			func(_ memgraph.Operator, s memgraph.Settings) bool { return s.HookReadMiB == 8 }},
	} {
		if !strings.Contains(string(readme), c.key+":") {
			t.Errorf("the README does not name %s", c.key)
		}
		for _, w := range c.where {
			if !strings.Contains(string(readme), w) {
				t.Errorf("the README does not name %s, where %s is read", w, c.key)
			}
		}
		o, oprobs := memgraph.ParseOperator("config", []byte(c.line+"\n"))
		s, sprobs := memgraph.ParseSettings([]byte(c.line + "\n"))
		switch c.reader {
		case operator:
			if len(oprobs) > 0 || !c.set(o, memgraph.Settings{}) {
				t.Errorf("%s: the operator's file does not read it: %v", c.key, oprobs)
			}
			if len(sprobs) == 0 || c.set(memgraph.Operator{}, s) {
				t.Errorf("%s: the tracked settings file accepts it", c.key)
			}
		case settings:
			if len(sprobs) > 0 || !c.set(memgraph.Operator{}, s) {
				t.Errorf("%s: the settings file does not read it: %v", c.key, sprobs)
			}
			if len(oprobs) == 0 {
				t.Errorf("%s: the operator's file accepts it", c.key)
			}
		}
	}
	for _, k := range memgraph.OperatorKeys {
		if !slices.Contains([]string{"commit_secrets", "merge", "skills", "tree_limit_mib"}, k) {
			t.Errorf("operator key %s is not in this table (nor, likely, in the README)", k)
		}
	}
}

// TestServeMergeSource: under serve, a user's runtime reads merge: from
// the user's own .git/mindmount/config first and ROOT/config second (the
// README's Dreams section says so).
func TestServeMergeSource(t *testing.T) {
	root := t.TempDir()
	os.WriteFile(filepath.Join(root, OperatorConfigFile), []byte("merge: review\n"), 0o644)
	rootCfg := &memgraph.OperatorSource{Path: filepath.Join(root, OperatorConfigFile), Strict: true, RootOnly: true}
	dir := newUser(t, root, "alice")
	rt, err := OpenRuntime(dir, RuntimeConfig{Operator: rootCfg})
	if err != nil {
		t.Fatal(err)
	}
	if got := rt.Reviewer().MergeMode(); got != memgraph.MergeReview {
		t.Errorf("ROOT/config says review, the user's file nothing: %s", got)
	}
	own := filepath.Join(dir, ".git", filepath.FromSlash(memgraph.OperatorFile))
	os.MkdirAll(filepath.Dir(own), 0o755)
	os.WriteFile(own, []byte("merge: auto\n"), 0o644)
	if got := rt.Reviewer().MergeMode(); got != memgraph.MergeAuto {
		t.Errorf("the user's own file says auto: %s", got)
	}
}
