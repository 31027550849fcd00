package github_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/mindmount/mindmount/consolidate/llm"
	"github.com/mindmount/mindmount/consolidate/llmtest"
	"github.com/mindmount/mindmount/fs/tracker"
	"github.com/mindmount/mindmount/memgraph"
	"github.com/mindmount/mindmount/memgraph/recall"
	"github.com/mindmount/mindmount/serve/github"
	"github.com/mindmount/mindmount/serve/github/githubtest"
	"github.com/mindmount/mindmount/template"
)

const token = "ghp_faketoken0123456789abcdefABCDEF0123"

// run runs git in dir.
func run(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// project is a bare project repository with code on main and a fresh
// memory on the orphan branch mindmount/memory.
func project(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	bare := filepath.Join(root, "project.git")
	run(t, root, "init", "-q", "--bare", "-b", "main", bare)
	code := filepath.Join(root, "code")
	run(t, root, "init", "-q", "-b", "main", code)
	os.WriteFile(filepath.Join(code, "cache.go"), []byte("package cache\n"), 0o644)
	run(t, code, "add", ".")
	run(t, code, "commit", "-q", "-m", "code")
	run(t, code, "push", "-q", bare, "main")
	mem := filepath.Join(root, "mem")
	run(t, root, "init", "-q", "-b", github.MemoryBranch, mem)
	if _, err := template.Write(mem, "", false); err != nil {
		t.Fatal(err)
	}
	run(t, mem, "add", "-A")
	run(t, mem, "commit", "-q", "-m", "mindmount init")
	run(t, mem, "push", "-q", bare, github.MemoryBranch)
	return bare
}

// clone is one CI job's fresh clone of the memory branch.
func clone(t *testing.T, bare string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "memory")
	ctx := context.Background()
	if err := github.Clone(ctx, bare, dir); err != nil {
		t.Fatal(err)
	}
	if err := github.WriteReviewMode(ctx, dir); err != nil {
		t.Fatal(err)
	}
	return dir
}

// facts the scripted model extracts, by source.
var facts = map[string][]map[string]any{
	"PR#1": {
		{"kind": "decision", "slug": "cache-uses-sqlite", "description": "Decision: use SQLite for the cache", "fact": "The cache is stored in SQLite; no cache server is run.",
			"topic": "cache-backend", "keywords": []string{"cache", "sqlite", "storage"}},
		{"kind": "convention", "slug": "cache-through-store-interface", "description": "Convention: reach the cache only through the Store interface", "fact": "Code reaches the cache only through cache.Store, never the database directly.",
			"topic": "cache-access", "keywords": []string{"cache", "store", "interface"}},
	},
	"PR#1 review": {{"kind": "convention", "slug": "cache-tests-use-memory-store", "description": "Convention: cache tests use the in-memory Store", "fact": "Cache tests use the in-memory Store, never a real SQLite file.",
		"topic": "cache-tests", "keywords": []string{"cache", "sqlite", "test"}}},
	"PR#2": {{"kind": "gotcha", "slug": "sqlite-wal-checkpoint", "description": "Gotcha: SQLite WAL files grow until checkpointed", "fact": "Run a WAL checkpoint after bulk cache writes or the -wal file grows without bound.",
		"topic": "sqlite-wal", "keywords": []string{"sqlite", "wal", "gotcha"}}},
	"PR#3": {{"kind": "convention", "slug": "lint-with-golangci", "description": "Convention: lint with golangci-lint before merging", "fact": "Every change passes golangci-lint.",
		"topic": "lint", "keywords": []string{"lint", "ci"}}},
	"PR#4": {{"kind": "decision", "slug": "cache-uses-redis", "description": "Decision: move the cache to Redis", "fact": "The cache is stored in Redis, shared by every instance; SQLite is no longer used for it.",
		"topic": "cache-backend", "keywords": []string{"cache", "redis", "storage"}}},
	"PR#6": {{"kind": "decision", "slug": "no-orm", "description": "Decision: no ORM, plain SQL", "fact": "Queries are written in plain SQL.",
		"topic": "orm", "keywords": []string{"sql"}}},
}

var (
	sourceRE = regexp.MustCompile(`Source: (\S+)`)
	factRE   = regexp.MustCompile(`<fact number="(\d+)"`)
)

// model scripts the fake model: extraction by source (and PR#1's review
// comment, ingested later); decisions ADD, except a Redis fact, which
// contradicts the SQLite decision when it is a candidate, and the
// conventions of PR#1 that (wrongly) claim to contradict the decision,
// their own sibling.
func model(t *testing.T) llm.Provider {
	srv := llmtest.New(t)
	srv.Handle(func(c llmtest.Call) llmtest.Reply {
		switch c.Kind {
		case llmtest.KindExtract:
			m := sourceRE.FindStringSubmatch(c.Prompt)
			if m == nil {
				return llmtest.Reply{Content: `{"facts": []}`}
			}
			if strings.Contains(c.Prompt, "in-memory Store") {
				return llmtest.Reply{Content: llmtest.JSON(map[string]any{"facts": facts[m[1]+" review"]})}
			}
			return llmtest.Reply{Content: llmtest.JSON(map[string]any{"facts": facts[m[1]]})}
		case llmtest.KindDecide:
			var decs []map[string]any
			blocks := factRE.FindAllStringSubmatchIndex(c.Prompt, -1)
			for i, b := range blocks {
				end := len(c.Prompt)
				if i+1 < len(blocks) {
					end = blocks[i+1][0]
				}
				block := c.Prompt[b[0]:end]
				head, _, _ := strings.Cut(block, "candidates")
				d := map[string]any{"fact": i, "action": "ADD", "target": "", "description": "", "text": ""}
				switch {
				case strings.Contains(head, "Redis") && strings.Contains(block, "path: user_memory/cache-uses-sqlite\n"):
					d["action"], d["target"] = "DELETE", "user_memory/cache-uses-sqlite"
				case (strings.Contains(head, "Store interface") || strings.Contains(head, "in-memory Store")) && strings.Contains(block, "path: user_memory/cache-uses-sqlite\n"):
					d["action"], d["target"] = "DELETE", "user_memory/cache-uses-sqlite"
				}
				decs = append(decs, d)
			}
			return llmtest.Reply{Content: llmtest.JSON(map[string]any{"decisions": decs})}
		}
		return llmtest.Reply{Content: "{}"}
	})
	return llm.NewOllama(srv.OllamaURL(), "fake")
}

// event is a pull_request event payload.
func event(t *testing.T, n int, action, title, body string, merged bool, base, head string) github.Item {
	t.Helper()
	pr := map[string]any{"number": n, "title": title, "body": body, "html_url": fmt.Sprintf("https://github.example/acme/shop/pull/%d", n),
		"merged": merged, "state": "open", "base": map[string]any{"ref": base}, "head": map[string]any{"ref": head}}
	if merged {
		pr["state"], pr["merge_commit_sha"] = "closed", fmt.Sprintf("%040d", n)
	}
	data, _ := json.Marshal(map[string]any{"action": action, "number": n, "pull_request": pr,
		"repository": map[string]any{"name": "shop", "owner": map[string]any{"login": "acme"}}})
	it, err := github.ParseEvent(data)
	if err != nil {
		t.Fatal(err)
	}
	return it
}

type demo struct {
	t     *testing.T
	bare  string
	fake  *githubtest.Server
	cl    *github.Client
	model llm.Provider
	log   *slog.Logger
}

func newDemo(t *testing.T) *demo {
	bare := project(t)
	fake := githubtest.New(t, token, "acme", "shop", bare)
	cl, err := github.NewClient(fake.URL+"/api/v3", token, "acme", "shop", nil)
	if err != nil {
		t.Fatal(err)
	}
	return &demo{t: t, bare: bare, fake: fake, cl: cl, model: model(t), log: slog.New(slog.NewTextHandler(io.Discard, nil))}
}

// ingest is the ingest job of a merged pull request: a fresh clone, the
// event completed through the API, consolidation, then propose.
func (d *demo) ingest(it github.Item) (github.Outcome, int) {
	d.t.Helper()
	ctx := context.Background()
	dir := clone(d.t, d.bare)
	if err := d.cl.Complete(ctx, &it); err != nil {
		d.t.Fatal(err)
	}
	rep, err := github.Ingest(ctx, dir, it, d.model, d.log)
	if err != nil {
		d.t.Fatal(err)
	}
	d.t.Logf("ingest %s: %s %v", it.Source(), rep, rep.Problems)
	out, err := github.Propose(ctx, dir, d.cl, d.log)
	if err != nil {
		d.t.Fatal(err)
	}
	return out, len(rep.Sources)
}

// merged ingests merged pull request n and merges the proposal.
func (d *demo) merged(n int, title, body string, files []string, review ...string) github.PR {
	d.t.Helper()
	d.fake.AddPR(n, title, body, files, review)
	out, _ := d.ingest(event(d.t, n, "closed", title, body, true, "main", fmt.Sprintf("feature-%d", n)))
	if len(out.Opened) != 1 {
		d.t.Fatalf("PR#%d: want one proposal, got %+v", n, out)
	}
	if err := d.fake.Merge(out.Opened[0].Number); err != nil {
		d.t.Fatal(err)
	}
	return out.Opened[0]
}

// recall is the recall job of a new pull request: the comment posted or
// edited ("" when none).
func (d *demo) recall(it github.Item) string {
	d.t.Helper()
	ctx := context.Background()
	dir := clone(d.t, d.bare)
	g, err := tracker.ScanServed(dir)
	if err != nil {
		d.t.Fatal(err)
	}
	if it.Paths, err = d.cl.ChangedPaths(ctx, it.Number); err != nil {
		d.t.Fatal(err)
	}
	body, _ := github.Recall(ctx, g, it, github.DefaultMinScore, 5, github.Links{Server: "https://github.example", Owner: "acme", Repo: "shop"})
	if body == "" {
		return ""
	}
	if _, _, err := d.cl.Upsert(ctx, it.Number, body); err != nil {
		d.t.Fatal(err)
	}
	return body
}

// memory reads rel on the project's memory branch.
func (d *demo) memory(rel string) *memgraph.Memory {
	d.t.Helper()
	m, probs := memgraph.Parse(rel, []byte(run(d.t, d.bare, "show", github.MemoryBranch+":"+rel)+"\n"))
	if m == nil || len(probs) > 0 {
		d.t.Fatalf("%s: %v", rel, probs)
	}
	return m
}

// TestDemo replays the project-memory demo end to end against the fake
// hosting service and the scripted model.
func TestDemo(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git CLI not installed")
	}
	d := newDemo(t)
	// The project's own pull requests exist before any proposal, as on the
	// service, where proposals take the next free numbers.
	for _, n := range []int{1, 2, 3, 4, 11} {
		d.fake.AddPR(n, "", "", nil, nil)
	}
	first := d.merged(1, "Cache: store in SQLite", "We decided to use SQLite for the cache. Reach it only through cache.Store.", []string{"internal/cache/sqlite.go", "internal/cache/store.go"})
	d.merged(2, "Checkpoint the SQLite WAL", "The -wal file grew to 3 GB in production.", []string{"internal/cache/sqlite.go"})
	d.merged(3, "Lint in CI", "Adds golangci-lint.", []string{".golangci.yml"})
	if body := d.pr(first.Number).Body; !strings.Contains(body, "cache-uses-sqlite.md") || !strings.Contains(body, "cache-through-store-interface.md") {
		t.Fatalf("the first proposal does not list both memories of PR#1:\n%s", body)
	}
	dec := d.memory("user_memory/cache-uses-sqlite.md")
	if dec.Front.Source != "PR#1 https://github.example/acme/shop/pull/1 merge 0000000" {
		t.Errorf("provenance: source %q", dec.Front.Source)
	}
	for rel, kind := range map[string]string{"user_memory/cache-uses-sqlite.md": "decision", "user_memory/cache-through-store-interface.md": "convention", "user_memory/sqlite-wal-checkpoint.md": "gotcha"} {
		if tags := d.memory(rel).Front.Tags; len(tags) != 1 || tags[0] != kind {
			t.Errorf("%s: tags %v, want [%s]", rel, tags, kind)
		}
	}
	if log := run(t, d.bare, "log", "--format=%B", github.MemoryBranch); !strings.Contains(log, "Mindmount-Source: PR#1\n") ||
		!strings.Contains(log, "Mindmount-Provenance: https://github.example/acme/shop/pull/1 merge "+fmt.Sprintf("%040d", 1)) {
		t.Errorf("the memory branch's log lacks the provenance:\n%s", log)
	}
	conv := d.memory("user_memory/cache-through-store-interface.md")
	if !conv.Active() {
		t.Fatalf("the convention was retired by its sibling: %+v", conv.Front)
	}

	// PR#1 again, with a review comment fetched since: one more batch of
	// the same source. Its convention (wrongly) claims to contradict the
	// SQLite decision, offered to it as a candidate: a sibling, so it is
	// added beside it and the decision stays.
	again := d.merged(1, "Cache: store in SQLite", "We decided to use SQLite for the cache. Reach it only through cache.Store.", []string{"internal/cache/sqlite.go", "internal/cache/store.go"},
		"Tests use the in-memory Store, never a real SQLite file.")
	if body := d.pr(again.Number).Body; !strings.Contains(body, "distilled from the same source, PR\\#1") {
		t.Errorf("the proposal does not say the sibling was kept:\n%s", body)
	}
	if m := d.memory("user_memory/cache-uses-sqlite.md"); !m.Active() || m.Front.SupersededBy != "" {
		t.Fatalf("the decision was superseded by a later batch of its own source: %+v", m.Front)
	}
	if m := d.memory("user_memory/cache-tests-use-memory-store.md"); !m.Active() || !strings.HasPrefix(m.Front.Source, "PR#1 ") {
		t.Fatalf("the review's convention: %+v", m.Front)
	}

	// A new pull request opens: the SQLite decision is recalled, in one
	// comment that a second run edits.
	d.fake.AddPR(4, "Move the cache to Redis", "SQLite cannot be shared by instances: move the cache to Redis.", []string{"internal/cache/redis.go"}, []string{"drop the sqlite file too"})
	open := event(t, 4, "opened", "Move the cache to Redis", "SQLite cannot be shared by instances: move the cache to Redis.", false, "main", "feature-4")
	body := d.recall(open)
	if !strings.Contains(body, "cache-uses-sqlite.md") || !strings.Contains(body, github.Marker) || !strings.Contains(body, "[PR\\#1](https://github.example/acme/shop/pull/1)") {
		t.Fatalf("recall comment:\n%s", body)
	}
	posts := len(d.fake.Writes())
	d.recall(open)
	if cs := d.fake.Comments(4); len(cs) != 1 {
		t.Fatalf("recall twice: %d comments, want one edited", len(cs))
	}
	if again := d.fake.Writes()[posts:]; len(again) != 1 || !strings.HasPrefix(again[0], "PATCH /repos/acme/shop/issues/comments/") {
		t.Fatalf("recall again: %v, want one PATCH of the comment", again)
	}

	// It reverses the decision and is merged: the proposal supersedes
	// SQLite and adds Redis.
	out, _ := d.ingest(event(t, 4, "closed", "Move the cache to Redis", "SQLite cannot be shared by instances: move the cache to Redis.", true, "main", "feature-4"))
	if len(out.Opened) != 1 {
		t.Fatalf("want one proposal, got %+v", out)
	}
	var prop githubtest.PR
	for _, p := range d.fake.PRs() {
		if p.Number == out.Opened[0].Number {
			prop = p
		}
	}
	for _, want := range []string{"### Added", "cache-uses-redis.md", "### Retired (superseded)", "cache-uses-sqlite.md", "contradicted by `user_memory/cache-uses-redis`", "supersedes `user_memory/cache-uses-sqlite`", "PR\\#4"} {
		if !strings.Contains(prop.Body, want) {
			t.Errorf("proposal body lacks %q:\n%s", want, prop.Body)
		}
	}
	if err := d.fake.Merge(prop.Number); err != nil {
		t.Fatal(err)
	}
	if m := d.memory("user_memory/cache-uses-sqlite.md"); m.Active() || m.Front.SupersededBy != "user_memory/cache-uses-redis" {
		t.Fatalf("SQLite after the merge: %+v", m.Front)
	}
	if m := d.memory("user_memory/cache-through-store-interface.md"); !m.Active() {
		t.Fatalf("the convention was superseded: %+v", m.Front)
	}

	// Recall never returns SQLite again; it recalls Redis instead.
	d.fake.AddPR(11, "Tune the SQLite cache", "sqlite cache tuning", []string{"internal/cache/sqlite.go"}, nil)
	body = d.recall(event(t, 11, "opened", "Tune the SQLite cache", "sqlite cache tuning", false, "main", "feature-11"))
	if strings.Contains(body, "cache-uses-sqlite.md") || !strings.Contains(body, "cache-uses-redis.md") {
		t.Fatalf("after the reversal, the recall comment:\n%s", body)
	}
	g, err := tracker.ScanServed(clone(t, d.bare))
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range g.RecallContext(context.Background(), "sqlite cache", recall.Options{K: 20}) {
		if h.Path == "user_memory/cache-uses-sqlite.md" {
			t.Fatalf("recall returned the superseded SQLite decision")
		}
	}

	// Idempotence: the same event again proposes nothing new.
	out, n := d.ingest(event(t, 4, "closed", "Move the cache to Redis", "SQLite cannot be shared by instances: move the cache to Redis.", true, "main", "feature-4"))
	if n != 0 || len(out.Opened) != 0 {
		t.Fatalf("ingest again: %d sources, %+v", n, out)
	}
}

// pr is the fake's pull request n.
func (d *demo) pr(n int) githubtest.PR {
	d.t.Helper()
	for _, p := range d.fake.PRs() {
		if p.Number == n {
			return p
		}
	}
	d.t.Fatalf("no pull request %d", n)
	return githubtest.PR{}
}

// proposeIn runs propose in the clone dir.
func proposeIn(d *demo, dir string) (github.Outcome, error) {
	return github.Propose(context.Background(), dir, d.cl, d.log)
}

// newClient is a client of the fake with token tok.
func newClient(base, tok string) (*github.Client, error) {
	return github.NewClient(base, tok, "acme", "shop", nil)
}
