package webui

import (
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mindmount/mindmount/memgraph"
)

// TestMemoriesInIndexOrder: the list shows the blocks first, then user
// memories in rank order (uses, then last use), then where the index's
// budget cuts the list; retired ones only behind the filter.
func TestMemoriesInIndexOrder(t *testing.T) {
	s := newSiteSeeded(t, func(dir string) {
		files := map[string]string{}
		for _, n := range []string{"m1", "m2", "m3", "m4", "m5", "m6"} {
			files["user_memory/zz-"+n+".md"] = memoryFile(n, "Filler memory "+n, "Filler.")
		}
		writeFiles(t, dir, files)
		gitT(t, dir, "add", "-A")
		gitT(t, dir, "commit", "-qm", "fillers")
	})
	code, body := s.get("/")
	if code != http.StatusOK {
		t.Fatalf("GET /: %d", code)
	}
	order := []string{"character.md", "user.md", "user_memory/porto.md", "user_memory/likes-tea.md", "user_memory/cats.md", "character_memory/brief.md"}
	last := -1
	for _, p := range order {
		i := strings.Index(body, ">"+p+"<")
		if i < 0 || i < last {
			t.Fatalf("%s is not in index order (at %d, previous at %d):\n%s", p, i, last, body)
		}
		last = i
	}
	mustContain(t, body, "shows the agent 9 of 9 active memories")
	mustNotContain(t, body, "below the index budget")

	// A budget that holds one line: the rest falls below the cut.
	for tok := 50; indexShown(s.rt.Graph.Index(memgraph.KindUser)) != 1; tok += 5 {
		if tok > 1000 {
			t.Fatal("no budget holds exactly one line")
		}
		s.rt.Graph.SetIndexTokens(tok)
	}
	_, body = s.get("/")
	mustContain(t, body, "shows the agent 1 of 9", "below the index budget")
	if strings.Index(body, "below the index budget") > strings.Index(body, ">user_memory/likes-tea.md<") {
		t.Fatal("likes-tea (second in rank) is listed above the cut")
	}

	// Retired memories: hidden, then shown with ?retired=1.
	writeFiles(t, s.dir, map[string]string{"user_memory/cats.md": strings.Replace(memoryFile("Has a cat", "Has a cat named Miso", "You have a cat named Miso."), "status: active", "status: retracted", 1)})
	s.settle()
	_, body = s.get("/")
	mustNotContain(t, body, ">user_memory/cats.md<")
	_, body = s.get("/?retired=1")
	mustContain(t, body, ">user_memory/cats.md<", "retracted")
}

// TestMemoryPage: frontmatter as a table, the body rendered, uses charted,
// links of the same topic, and the history with diff and trailers.
func TestMemoryPage(t *testing.T) {
	s := newSiteSeeded(t, func(dir string) {
		writeFiles(t, dir, map[string]string{
			"user_memory/lisbon.md": "---\ndescription: Lives in Lisbon\ntopic: home-city\nsupersedes: user_memory/porto\n---\n# Lives in Lisbon\n\n## Fact\nYou live in **Lisbon**.\n\n## Access log\nused, 01.12.26\n",
			"user_memory/porto.md":  "---\ndescription: Lives in Porto\nstatus: contradicted\nsuperseded_by: user_memory/lisbon\ntopic: home-city\n---\n# Lives in Porto\n\n## Fact\nYou live in Porto.\n\n## Access log\n",
		})
		gitT(t, dir, "add", "-A")
		gitT(t, dir, "commit", "-qm", "consolidate transcripts/s1.jsonl: 1 added, 0 updated, 1 contradicted\n\n  user_memory/lisbon.md\n  user_memory/porto.md\n\nMindmount-Model: fake/model\nMindmount-Transcript: transcripts/s1.jsonl#1-4 sha256:abc")
	})
	code, body := s.get("/m/user_memory/lisbon.md")
	if code != http.StatusOK {
		t.Fatalf("GET memory: %d\n%s", code, body)
	}
	mustContain(t, body,
		"<th>description</th><td>Lives in Lisbon</td>", "<th>topic</th><td>home-city</td>",
		"<strong>Lisbon</strong>", // markdown rendered
		`class="chart"`,           // the uses chart
		"supersedes: <a", "user_memory/porto.md", "same topic",
		"consolidate transcripts/s1.jsonl", `class="count count-added">1 added`, "<dt>Transcript</dt><dd>transcripts/s1.jsonl#1-4 sha256:abc</dd>",
		`<span class="add">&#43;description: Lives in Lisbon</span>`, "Revert")
	// The seed commit of porto appears in porto's history too.
	_, body = s.get("/m/user_memory/porto.md")
	mustContain(t, body, "superseded by: <a", "seed", "status: contradicted")
}

// TestMemoryPathRefused: /m/ serves only memory files the graph knows;
// traversal, .git, transcripts and unknown files are 404.
func TestMemoryPathRefused(t *testing.T) {
	s := newSite(t)
	writeFiles(t, s.dir, map[string]string{"transcripts/s1.jsonl": `{"role":"user","content":"secret talk"}` + "\n"})
	outside := filepath.Join(filepath.Dir(s.dir), "outside.md")
	if err := os.WriteFile(outside, []byte("---\ndescription: outside\n---\n# Outside\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{
		"/m/../outside.md", "/m/..%2foutside.md", "/m/user_memory/..%2f..%2foutside.md", "/m/%2e%2e/outside.md",
		"/m/.git/config", "/m/.git/HEAD", "/m/transcripts/s1.jsonl", "/m/user_memory/none.md", "/m/", "/m//etc/passwd",
		"/edit/../outside.md", "/edit/.git/config",
	} {
		req, _ := http.NewRequest(http.MethodGet, s.ts.URL+"/", nil)
		req.URL.Opaque = p // sent as written, not cleaned by the client
		resp, err := s.c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound {
			t.Errorf("GET %s: %d, want 404", p, resp.StatusCode)
		}
	}
	// A symlink planted in the tree is not followed out of it.
	if err := os.Symlink(outside, filepath.Join(s.dir, "user_memory", "link.md")); err != nil {
		t.Fatal(err)
	}
	s.settle()
	code, body := s.get("/m/user_memory/link.md")
	if strings.Contains(body, "Outside") && code == http.StatusOK {
		t.Fatalf("the page followed a symlink out of the repository: %d\n%s", code, body)
	}
}

// TestMemorySwappedForSymlink: a memory the graph knows, swapped on disk
// for a symbolic link to a file outside the repository, is not read
// through the link: the page refuses instead of showing the outside file.
func TestMemorySwappedForSymlink(t *testing.T) {
	s := newSite(t)
	rel := "user_memory/likes-tea.md"
	if code, _ := s.get("/m/" + rel); code != http.StatusOK {
		t.Fatalf("GET /m/%s: %d", rel, code)
	}
	outside := filepath.Join(t.TempDir(), "outside.md")
	if err := os.WriteFile(outside, []byte("---\ndescription: outside-marker\n---\n# Outside\n\nOUTSIDE-THE-TREE\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(s.dir, filepath.FromSlash(rel))
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, p); err != nil {
		t.Fatal(err)
	}
	s.settle()
	code, body := s.get("/m/" + rel)
	if strings.Contains(body, "OUTSIDE-THE-TREE") || strings.Contains(body, "outside-marker") {
		t.Fatalf("the page read a memory through a symbolic link out of the repository: %d\n%s", code, body)
	}
}

// TestTimeline: commits newest first with author, subject, counts and
// trailers; the author filter; paging.
func TestTimeline(t *testing.T) {
	s := newSiteSeeded(t, func(dir string) {
		writeFiles(t, dir, map[string]string{"user_memory/x.md": memoryFile("X", "x", "x.")})
		gitT(t, dir, "add", "-A")
		gitT(t, dir, "commit", "--author=consolidator <c@x>", "-qm", "consolidate transcripts/a.jsonl: 1 added\n\n  user_memory/x.md\n\nMindmount-Model: fake/m\nMindmount-User: alice\nMindmount-Sandbox: bwrap[42]")
	})
	code, body := s.get("/log")
	if code != http.StatusOK {
		t.Fatalf("GET /log: %d", code)
	}
	mustContain(t, body, "consolidate transcripts/a.jsonl: 1 added", "<dt>User</dt><dd>alice</dd>", "<dt>Sandbox</dt><dd>bwrap[42]</dd>",
		"<summary>decisions</summary>", `<div class="subject">seed</div>`, `/log?author=seed`, `/log?author=consolidator`)
	if strings.Index(body, "consolidate transcripts/a.jsonl") > strings.Index(body, `<div class="subject">seed</div>`) {
		t.Fatal("the timeline is not newest first")
	}
	_, body = s.get("/log?author=seed")
	mustNotContain(t, body, "consolidate transcripts/a.jsonl")
	mustContain(t, body, "seed")

	_, body = s.get("/log?skip=1")
	mustNotContain(t, body, "consolidate transcripts/a.jsonl")
	mustContain(t, body, "newer")
}

// TestSearch: recall's ranking with its score and the fields that matched;
// retired memories only when asked.
func TestSearch(t *testing.T) {
	s := newSite(t)
	code, body := s.get("/search?q=green+tea")
	if code != http.StatusOK {
		t.Fatalf("search: %d", code)
	}
	mustContain(t, body, ">user_memory/likes-tea.md<", "score 1.", "score ", "matched in: title, description, fact")
	mustNotContain(t, body, ">user_memory/porto.md<")
	_, body = s.get("/search?q=zzzzqqq")
	mustContain(t, body, "No memory matches.")
}

// TestStatusPage: invalid files with their problems, files held back for
// a secret by rule and line but never the value, pending changes.
func TestStatusPage(t *testing.T) {
	s := newSite(t)
	const key = "AKIAZ3MQR7WXPLKJH4TB"
	writeFiles(t, s.dir, map[string]string{
		"user_memory/bad.md":    "---\ndescription: bad\ncolour: red\n---\n# Bad\n",
		"user_memory/leaky.md":  memoryFile("Leaky", "has a key", "aws_access_key_id = "+key+"\naws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYzEXAMPLEKEY"),
		"user_memory/other.md":  memoryFile("Other", "other", "Other."),
		"user_memory/other2.md": memoryFile("Other2", "other2", "Other2."),
	})
	s.settle()
	code, body := s.get("/status")
	if code != http.StatusOK {
		t.Fatalf("status: %d", code)
	}
	mustContain(t, body, "user_memory/bad.md", "colour", "Held back for secrets", "user_memory/leaky.md", "rule ")
	mustNotContain(t, body, key, "wJalrXUtnFEMI")
	// Each problem in its own list: a secret is told apart by its type
	// (tracker.ErrSecret).
	invalid, secrets, _ := strings.Cut(body, "Held back for secrets")
	secrets, _, _ = strings.Cut(secrets, "Waiting to be committed")
	if !strings.Contains(secrets, "user_memory/leaky.md") || strings.Contains(secrets, "user_memory/bad.md") {
		t.Errorf("the secrets list is wrong:\n%s", secrets)
	}
	if strings.Contains(invalid, "user_memory/leaky.md") {
		t.Errorf("a held-back secret is listed as invalid:\n%s", invalid)
	}
}

// TestGraphPage: an SVG with a node per memory, retired ones marked, a
// supersedes edge.
func TestGraphPage(t *testing.T) {
	s := newSite(t)
	writeFiles(t, s.dir, map[string]string{
		"user_memory/lisbon.md": "---\ndescription: Lives in Lisbon\nsupersedes: user_memory/porto\n---\n# Lisbon\n\n## Fact\nLisbon.\n",
		"user_memory/porto.md":  "---\ndescription: Lives in Porto\nstatus: contradicted\nsuperseded_by: user_memory/lisbon\n---\n# Porto\n\n## Fact\nPorto.\n",
	})
	s.settle()
	code, body := s.get("/graph")
	if code != http.StatusOK {
		t.Fatalf("graph: %d", code)
	}
	if n := strings.Count(body, "<circle"); n != 5 {
		t.Errorf("%d circles, want 5 (4 user memories and 1 character memory)", n)
	}
	mustContain(t, body, `class="node-retired"`, `class="edge-supersedes"`, `href="/m/user_memory/lisbon.md"`)
}

// TestEventsStreamHead: the live stream says the HEAD at once.
func TestEventsStreamHead(t *testing.T) {
	s := newSite(t)
	req, _ := http.NewRequest(http.MethodGet, s.ts.URL+"/events", nil)
	resp, err := s.c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("content type %q", ct)
	}
	buf := make([]byte, 0, 512)
	tmp := make([]byte, 512)
	for !strings.Contains(string(buf), "data: "+s.head()) {
		n, err := resp.Body.Read(tmp)
		if err != nil {
			t.Fatalf("stream ended before the head: %v: %q", err, buf)
		}
		buf = append(buf, tmp[:n]...)
	}
}

// TestMemoryHistoryFromIndex: a memory's history comes from the history
// index, not from a walk of the whole history: with no time at all for
// git log the page still shows every commit, including those made after
// the index was brought up to date (a revert through the page).
func TestMemoryHistoryFromIndex(t *testing.T) {
	s := newSiteSeeded(t, consolidationSeed(t))
	defer func(d time.Duration) { historyBudget = d }(historyBudget)
	historyBudget = time.Nanosecond
	if err := s.rt.Repo.IndexHistory(t.Context()); err != nil {
		t.Fatal(err)
	}
	target := s.head()
	_, body := s.get("/m/user_memory/porto.md")
	mustContain(t, body, "consolidate transcripts/s1.jsonl", "seed")
	mustNotContain(t, body, "stopped after a while")
	if code, body := s.post("/revert", url.Values{"commit": {target}}); code != http.StatusOK {
		t.Fatalf("revert: %d\n%s", code, body)
	}
	_, body = s.get("/m/user_memory/porto.md")
	mustContain(t, body, "revert "+target[:8], "consolidate transcripts/s1.jsonl", "seed")
	mustNotContain(t, body, "stopped after a while")
}
