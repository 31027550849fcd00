package tracker_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mindmount/mindmount/fs/gitrepo"
	"github.com/mindmount/mindmount/fs/tracker"
	"github.com/mindmount/mindmount/fs/tracker/conformance"
	"github.com/mindmount/mindmount/hooks"
	"github.com/mindmount/mindmount/memgraph"
)

// gateToken is a GitHub token's shape (never a real one): the secret rules
// find it in content and in names.
const gateToken = "ghp_0123456789abcdefghijklmnopqrstuvwxyzAB"

// gateRule is one change the gate refuses, written to a repository made by
// conformance.NewRepo.
type gateRule struct {
	name string
	rel  string
	data string // the new content ("" with del)
	del  bool
	link bool  // a symbolic link to data
	size int64 // a sparse file of this size (data unused)
	// want is the refusal; nil: the door commits it (the cursor through
	// a prepared change).
	want      error
	prepared  error // the refusal of prepared changes, when it differs
	treeQuiet bool  // the tree's doors hold it back without a report (the inbox)
}

var gateRules = []gateRule{
	{name: "secret in content", rel: "user_memory/api-key.md", data: conformance.Memory("Has an API key", "Api Key", "The key is "+gateToken+"."), want: tracker.ErrSecret},
	{name: "secret in a name", rel: "notes/" + gateToken + ".md", data: "# x\n", want: tracker.ErrSecret},
	{name: "invalid frontmatter", rel: "user_memory/bad.md", data: "---\nmood: odd\n---\n# Bad\n", want: tracker.ErrInvalid},
	{name: "invalid skill", rel: "skills/deploy/SKILL.md", data: "---\nname: deploy\ndescription: d\nversion: 2\n---\n", want: memgraph.ErrSkill},
	{name: "secret in a skill's script", rel: "skills/deploy/scripts/run.sh", data: "#!/bin/sh\ncurl -H 'Authorization: token " + gateToken + "' https://x\n", want: tracker.ErrSecret},
	{name: "a skill's file over 64 KiB", rel: "skills/deploy/assets/big.txt", data: strings.Repeat("x", 65<<10), want: memgraph.ErrSkill},
	{name: "read_only changed", rel: "character.md", data: strings.Replace(conformance.Character, "concise", "verbose", 1), want: tracker.ErrReadOnly},
	{name: "read_only deleted", rel: "character.md", del: true, want: tracker.ErrReadOnly},
	{name: "control character in a new name", rel: "notes/a\u2028b.md", data: "# x\n", want: tracker.ErrBadName},
	{name: "symbolic link", rel: "notes/passwd.md", data: "/etc/passwd", link: true, want: tracker.ErrSymlink},
	{name: "too large", rel: "notes/big.bin", size: tracker.MaxFile + 1, want: tracker.ErrTooLarge},
	{name: "the inbox", rel: "transcripts/chat.jsonl", data: `{"role":"user","content":"hi"}` + "\n", want: tracker.ErrInbox, treeQuiet: true},
	{name: "the cursor", rel: memgraph.CursorFile, data: "{}\n", want: tracker.ErrCursor, prepared: errNone},
	{name: "a synthesized file", rel: memgraph.ContextFile, data: "# forged context\n", want: tracker.ErrSynthesized, treeQuiet: true},
}

// errNone marks a rule a door lets through.
var errNone = errors.New("committed")

// gateDoor tries one rule through one door of a fresh repository and
// returns the refusal (nil when nothing said why) and whether HEAD moved.
type gateDoor struct {
	name     string
	prepared bool // the door hands the tracker a prepared change
	tree     bool // the door writes the work tree, and the tracker reads it
	audit    bool // the door commits nothing: it reports what a tree holds
	try      func(t *testing.T, dir string, r gateRule) error
}

// writeRule puts r's change into dir's work tree.
func writeRule(t *testing.T, dir string, r gateRule) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(r.rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	switch {
	case r.del:
		err := os.Remove(p)
		if err != nil {
			t.Fatal(err)
		}
	case r.link:
		if err := os.Symlink(r.data, p); err != nil {
			t.Fatal(err)
		}
	case r.size > 0:
		f, err := os.Create(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := f.Truncate(r.size); err != nil {
			t.Fatal(err)
		}
		f.Close()
	default:
		if err := os.WriteFile(p, []byte(r.data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// ruleChange is r as a prepared change; ok is false where a prepared
// change cannot say it (a symbolic link).
func ruleChange(r gateRule) (tracker.Change, bool) {
	if r.link {
		return tracker.Change{}, false
	}
	data := []byte(r.data)
	if r.size > 0 {
		data = make([]byte, r.size)
	}
	return tracker.Change{Message: "gate test", Author: gitrepo.Mindmount,
		Changes: []gitrepo.Change{{Path: r.rel, Data: data, Delete: r.del}}}, true
}

// ruleVersions are r's two sides as the gate's callers see them.
func ruleVersions(t *testing.T, dir string, r gateRule) (after, before tracker.Version) {
	prev, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(r.rel)))
	if err == nil {
		before = tracker.Version{Data: prev, Exists: true}
	}
	after = tracker.Version{Data: []byte(r.data), Exists: !r.del, Link: r.link, Size: r.size}
	return after, before
}

// refusedBy returns the first problem's typed reason, or nil.
func refusedBy(ps []memgraph.Problem) error {
	if len(ps) == 0 {
		return nil
	}
	if ps[0].Err == nil {
		return errors.New(ps[0].String())
	}
	return ps[0].Err
}

var gateDoors = []gateDoor{
	{name: "burst (mount, watch)", tree: true, try: func(t *testing.T, dir string, r gateRule) error {
		tr, _, _ := open(t, dir, tracker.Config{})
		writeRule(t, dir, r)
		tr.Touch(r.rel, "agent")
		if err := tr.Flush(context.Background()); err != nil {
			t.Fatal(err)
		}
		return refusedBy(tr.Invalid())
	}},
	{name: "Write (MCP, HTTP)", tree: true, try: func(t *testing.T, dir string, r gateRule) error {
		tr, _, _ := open(t, dir, tracker.Config{})
		_, err := tr.Write(context.Background(), gitrepo.Author{Name: "mcp"}, "mcp", func() (tracker.Edit, error) {
			writeRule(t, dir, r)
			return tracker.Edit{Paths: []string{r.rel}}, nil
		})
		return err
	}},
	{name: "Ask (an MCP edit before it writes)", try: func(t *testing.T, dir string, r gateRule) error {
		if r.del || r.link || r.size > 0 {
			t.Skip("Ask is about content to write")
		}
		tr, _, _ := open(t, dir, tracker.Config{})
		ps, err := tr.Ask(r.rel, []byte(r.data))
		if err != nil {
			t.Fatal(err)
		}
		return refusedBy(ps)
	}},
	{name: "Apply (consolidation, web page, sync)", prepared: true, try: func(t *testing.T, dir string, r gateRule) error {
		c, ok := ruleChange(r)
		if !ok {
			t.Skip("a prepared change holds no symbolic link")
		}
		tr, _, _ := open(t, dir, tracker.Config{})
		_, err := tr.Apply(context.Background(), c)
		return err
	}},
	{name: "Alone (init, sync without a daemon)", prepared: true, try: func(t *testing.T, dir string, r gateRule) error {
		c, ok := ruleChange(r)
		if !ok {
			t.Skip("a prepared change holds no symbolic link")
		}
		_, _, repo := open(t, dir, tracker.Config{})
		_, err := tracker.Alone{Repo: repo}.Apply(context.Background(), c)
		return err
	}},
	{name: "import", try: func(t *testing.T, dir string, r gateRule) error {
		c, ok := ruleChange(r)
		if !ok {
			t.Skip("a prepared change holds no symbolic link")
		}
		_, _, repo := open(t, dir, tracker.Config{})
		return tracker.Alone{Repo: repo, Door: tracker.DoorImport}.Check(c)
	}},
	{name: "check (the CLI's audit)", audit: true, try: func(t *testing.T, dir string, r gateRule) error {
		after, before := ruleVersions(t, dir, r)
		return refusedBy(tracker.Check(r.rel, after, before, tracker.Rules{Door: tracker.DoorAudit}))
	}},
	{name: "pre-commit hook (git commit)", try: func(t *testing.T, dir string, r gateRule) error {
		if r.size > 0 {
			t.Skip("git add of a 100 MiB file is the burst's case, not the hook's")
		}
		after, before := ruleVersions(t, dir, r)
		writeRule(t, dir, r)
		conformance.Git(t, dir, "add", "-f", "-A", "--", r.rel) // -f: an ignored path forced in
		t.Chdir(dir)
		var out bytes.Buffer
		if err := hooks.PreCommit(context.Background(), &out); err == nil {
			return nil
		}
		// The hook prints the gate's own problem for the path.
		ps := tracker.Check(r.rel, after, before, tracker.Rules{Door: tracker.DoorTree})
		if len(ps) == 0 || !strings.Contains(out.String(), ps[0].String()) {
			t.Fatalf("the hook printed %q; the gate says %v", out.String(), ps)
		}
		return refusedBy(ps)
	}},
}

// TestGateDoorsAgree makes every door try every change the gate refuses
// and sees the same refusal, and HEAD unmoved, at each; the cursor alone
// goes through a prepared change (consolidation's) and passes the audit,
// and the inbox and a synthesized file are held back quietly where the
// tree is written (transcripts go there; watch mode writes the indexes
// there, git-ignored).
func TestGateDoorsAgree(t *testing.T) {
	for _, d := range gateDoors {
		for _, r := range gateRules {
			t.Run(d.name+"/"+r.name, func(t *testing.T) {
				dir := conformance.NewRepo(t)
				head := conformance.Git(t, dir, "rev-parse", "HEAD")
				got := d.try(t, dir, r)
				want := r.want
				if d.prepared && r.prepared != nil {
					want = r.prepared
				}
				if d.tree && r.treeQuiet || d.audit && r.prepared == errNone {
					want = nil
				}
				moved := conformance.Git(t, dir, "rev-parse", "HEAD") != head
				switch {
				case want == errNone:
					if got != nil || !moved {
						t.Fatalf("refused (%v) or not committed (moved %v); want it committed", got, moved)
					}
				case moved:
					t.Fatalf("committed; want %v", want)
				case want == nil && got != nil:
					t.Fatalf("refused with %v; want it held back quietly", got)
				case want != nil && !errors.Is(got, want):
					t.Fatalf("refusal %v; want %v", got, want)
				}
			})
		}
	}
}
