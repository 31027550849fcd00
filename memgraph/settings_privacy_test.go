package memgraph

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestPrivacySettings(t *testing.T) {
	s, probs := ParseSettings([]byte("transcript_retention: 72h\n"))
	if len(probs) != 0 || s.TranscriptRetention != 72*time.Hour {
		t.Fatalf("%+v %v", s, probs)
	}
	s, probs = ParseSettings([]byte("transcript_retention: forever\n"))
	if len(probs) != 0 || s.TranscriptRetention != -1 {
		t.Fatalf("%+v %v", s, probs)
	}
	for _, bad := range []string{"transcript_retention: -1h", "transcript_retention: soon"} {
		s, probs := ParseSettings([]byte(bad + "\n"))
		if len(probs) != 1 || probs[0].Line != 1 || s.TranscriptRetention != 0 {
			t.Errorf("%q: %+v %v", bad, s, probs)
		}
		if !strings.Contains(probs[0].Msg, strings.SplitN(bad, ":", 2)[0]) {
			t.Errorf("%q: message %q", bad, probs[0].Msg)
		}
	}
}

// TestCommitSecretsNotTracked (issue 23, item 3): commit_secrets in the
// tracked settings file is reported, by line, and ignored: the other
// settings of the file still apply.
func TestCommitSecretsNotTracked(t *testing.T) {
	s, probs := ParseSettings([]byte("index_tokens: 3000\ncommit_secrets: true\n"))
	if s.IndexTokens != 3000 || len(probs) != 1 || probs[0].Line != 2 || !strings.Contains(probs[0].Msg, "commit_secrets is ignored here") || !strings.Contains(probs[0].Msg, OperatorFile) {
		t.Fatalf("%+v %v", s, probs)
	}
}

// TestMergeModeNotTracked (issue 26): merge in the tracked settings is
// reported and ignored, so an agent cannot turn review off.
func TestMergeModeNotTracked(t *testing.T) {
	s, probs := ParseSettings([]byte("merge: auto\nindex_tokens: 3000\n"))
	if s.IndexTokens != 3000 || len(probs) != 1 || probs[0].Line != 1 || !strings.Contains(probs[0].Msg, "merge is ignored here") {
		t.Fatalf("%+v %v", s, probs)
	}
}

func TestParseOperator(t *testing.T) {
	cases := []struct {
		in    string
		want  Operator
		probs int
	}{
		{"", Operator{}, 0},
		{"commit_secrets: true\n", Operator{CommitSecrets: true}, 0},
		{"# a comment\ncommit_secrets: false # off\n", Operator{}, 0},
		{"commit_secrets: yes-please-sk_live_abcdefghijklmnop\n", Operator{}, 1},
		{"index_tokens: 3000\n", Operator{}, 1},
		{"nonsense\n", Operator{}, 1},
		{"merge: review\n", Operator{Merge: MergeReview}, 0},
		{"merge: auto\ncommit_secrets: true\n", Operator{Merge: MergeAuto, CommitSecrets: true}, 0},
		{"merge: sometimes\n", Operator{}, 1},
		{"merge: true\n", Operator{}, 1},
	}
	for _, c := range cases {
		o, probs := ParseOperator("config", []byte(c.in))
		if o != c.want || len(probs) != c.probs {
			t.Errorf("%q: %+v %v", c.in, o, probs)
		}
		for _, p := range probs {
			if strings.Contains(p.String(), "sk_live") || strings.Contains(p.String(), "yes-please") {
				t.Errorf("%q: a problem quotes the value: %v", c.in, p)
			}
		}
	}
}

func FuzzParseOperator(f *testing.F) {
	f.Add([]byte("commit_secrets: true\n"))
	f.Add([]byte("commit_secrets: maybe\nx\n"))
	f.Add([]byte("tree_limit_mib: 1024\n"))
	f.Add([]byte("tree_limit_mib: -1\ntree_limit_mib: 99999999999999999999\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		o, probs := ParseOperator("config", data)
		if l := o.TreeLimit(); l < 0 || l > maxTreeLimitMiB<<20 {
			t.Fatalf("tree limit %d out of range: %q", l, data)
		}
		for _, p := range probs {
			if p.Line < 1 {
				t.Fatalf("problem without a line: %v", p)
			}
		}
		if o.CommitSecrets && !strings.Contains(string(data), "true") {
			t.Fatalf("commit_secrets on without saying true: %q", data)
		}
		if o.Merge != "" && o.Merge != MergeAuto && o.Merge != MergeReview {
			t.Fatalf("merge %q", o.Merge)
		}
	})
}

// TestOperatorSourceStrict: under serve, ROOT/config counts only when
// nobody but its owner (root or the daemon's user) may write it; edits are
// seen without a restart.
func TestOperatorSourceStrict(t *testing.T) {
	p := filepath.Join(t.TempDir(), "config")
	src := &OperatorSource{Path: p, Strict: true}
	if o, probs := src.Get(); o.CommitSecrets || probs != nil {
		t.Fatalf("missing file: %+v %v", o, probs)
	}
	if err := os.WriteFile(p, []byte("commit_secrets: true\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if o, _ := src.Get(); !o.CommitSecrets {
		t.Fatal("the operator's file is not honoured")
	}
	if err := os.Chmod(p, 0o666); err != nil {
		t.Fatal(err)
	}
	if o, probs := src.Get(); o.CommitSecrets || len(probs) != 1 {
		t.Fatalf("a world-writable operator file is honoured: %+v %v", o, probs)
	}
	os.Chmod(p, 0o600)
	if err := os.WriteFile(p, []byte("commit_secrets: false\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if o, _ := src.Get(); o.CommitSecrets {
		t.Fatal("an edit is not seen")
	}
}

func TestHookReadSetting(t *testing.T) {
	if s, probs := ParseSettings([]byte("hook_read_mib: 16\n")); s.HookReadMiB != 16 || probs != nil {
		t.Fatalf("%+v %v", s, probs)
	}
	for _, bad := range []string{"hook_read_mib: 0\n", "hook_read_mib: 2048\n", "hook_read_mib: lots\n"} {
		if s, probs := ParseSettings([]byte(bad)); s.HookReadMiB != 0 || len(probs) != 1 {
			t.Errorf("%q: %+v %v", bad, s, probs)
		}
	}
}

// TestOperatorSourceRootOnly: a serve worker runs as the user, so a
// ROOT/config the user owned (were it ever there) must count for nothing:
// RootOnly honours root's file only.
func TestOperatorSourceRootOnly(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to make a file another user owns")
	}
	p := filepath.Join(t.TempDir(), "config")
	if err := os.WriteFile(p, []byte("commit_secrets: true\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if o, _ := (&OperatorSource{Path: p, Strict: true, RootOnly: true}).Get(); !o.CommitSecrets {
		t.Fatal("root's file is not honoured")
	}
	if err := os.Chown(p, 2101, 2101); err != nil {
		t.Fatal(err)
	}
	if o, probs := (&OperatorSource{Path: p, Strict: true, RootOnly: true}).Get(); o.CommitSecrets || len(probs) == 0 {
		t.Fatalf("a file the user owns switched the guard: %+v %v", o, probs)
	}
}
