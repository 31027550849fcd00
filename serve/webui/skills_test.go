package webui

import (
	"context"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mindmount/mindmount/consolidate/llm"
	"github.com/mindmount/mindmount/consolidate/llmtest"
	"github.com/mindmount/mindmount/serve/host"
)

const deploySkillMD = "---\nname: deploy-staging\ndescription: Deploy the app to staging.\nlicense: MIT\n---\n# Deploy\n\n1. Run **scripts/run.sh**.\n"

// skillSeed commits an active skill with an executable script, a draft,
// a retired skill and one whose description and body carry markup, then
// a second commit of the active skill.
func skillSeed(t testing.TB) func(dir string) {
	return func(dir string) {
		writeFiles(t, dir, map[string]string{
			"skills/deploy-staging/SKILL.md":       deploySkillMD,
			"skills/deploy-staging/scripts/run.sh": "#!/bin/sh\necho deployed\n",
			"skills/release/SKILL.md":              "---\nname: release\ndescription: Cut a release.\nmetadata:\n  mindmount-status: draft\n---\n1. Tag.\n",
			"skills/old-way/SKILL.md":              "---\nname: old-way\ndescription: The old way.\nmetadata:\n  mindmount-status: retired\n---\n1. Old.\n",
			"skills/xss/SKILL.md":                  "---\nname: xss\ndescription: \"<script>alert('skill')</script><img src=x onerror=alert(1)>\"\n---\n<script>alert('body')</script>\n\n[x](javascript:alert('link'))\n",
		})
		if err := os.Chmod(filepath.Join(dir, "skills/deploy-staging/scripts/run.sh"), 0o755); err != nil {
			t.Fatal(err)
		}
		gitT(t, dir, "add", "-A")
		gitT(t, dir, "commit", "-qm", "skills seeded")
		writeFiles(t, dir, map[string]string{"skills/deploy-staging/SKILL.md": deploySkillMD + "2. Open /health.\n"})
		gitT(t, dir, "commit", "-qam", "deploy-staging: check health")
	}
}

// TestSkillsPage: the list shows each skill's status, uses and
// description, escaped, with a review link for the draft; one skill's
// page shows its SKILL.md, its files with the executable bit and the
// history of its folder; anything but a known skill's name is 404.
func TestSkillsPage(t *testing.T) {
	s := newSiteSeeded(t, skillSeed(t))
	code, body := s.get("/skills")
	if code != http.StatusOK {
		t.Fatalf("GET /skills: %d\n%s", code, body)
	}
	mustContain(t, body, `aria-current="page">Skills`,
		`<a href="/skills/deploy-staging">deploy-staging</a></td><td>active</td>`, "Deploy the app to staging.",
		`<a href="/skills/release">release</a></td><td>draft · <a href="/status">review</a></td>`,
		`<a href="/skills/old-way">old-way</a></td><td>retired</td>`,
		"&lt;script&gt;alert(&#39;skill&#39;)&lt;/script&gt;")
	if strings.Count(body, `href="/status">review</a>`) != 1 {
		t.Errorf("a review link beside a skill that is no draft:\n%s", body)
	}
	code, body = s.get("/skills/deploy-staging")
	if code != http.StatusOK {
		t.Fatalf("GET one skill: %d\n%s", code, body)
	}
	mustContain(t, body, "<h1>deploy-staging</h1>", "status: active", "<th>license</th><td>MIT</td>",
		"<strong>scripts/run.sh</strong>", "<code>skills/deploy-staging/scripts/run.sh</code> (executable)",
		"<code>skills/deploy-staging/SKILL.md</code></li>", "deploy-staging: check health", "skills seeded", `<span class="add">&#43;2. Open /health.</span>`)
	mustNotContain(t, body, "Cut a release.")
	_, body = s.get("/skills/release")
	mustContain(t, body, "status: draft", `<a href="/status">review page</a>`)
	_, body = s.get("/skills/xss")
	if m := dangerous.FindString(strings.Replace(body, `<script src="/static/live.js" defer></script>`, "", 1)); m != "" {
		t.Errorf("skill page holds %q unescaped", m)
	}
	for _, p := range []string{"/skills/nope", "/skills/Deploy-Staging", "/skills/../user.md", "/skills/deploy-staging/scripts/run.sh", "/skills/%2e%2e", "/skills/user_memory"} {
		if code, _ := s.get(p); code != http.StatusNotFound {
			t.Errorf("GET %s: %d, want 404", p, code)
		}
	}
}

// TestSkillsPendingInADream: a skill a dream waiting for review would add
// is listed with its dream and a link to the review page; approving the
// dream there lands it, as a draft.
func TestSkillsPendingInADream(t *testing.T) {
	dir := newRepo(t)
	os.MkdirAll(filepath.Join(dir, ".git", "mindmount"), 0o700)
	if err := os.WriteFile(filepath.Join(dir, ".git", "mindmount", "config"), []byte("merge: review\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	model := llmtest.New(t)
	rt := startRuntime(t, dir, host.RuntimeConfig{Consolidate: true, Idle: time.Hour, Every: 1 << 20, Provider: llm.NewOllama(model.OllamaURL(), "fake")})
	s := serveRepo(t, dir, rt)
	writeFiles(t, dir, map[string]string{"transcripts/s1.jsonl": `{"role":"user","content":"Deploy to staging as always."}` + "\n"})
	model.Queue(llmtest.KindExtract, llmtest.Reply{Content: llmtest.JSON(map[string]any{"facts": []any{},
		"skills": []map[string]any{{"name": "deploy-staging", "description": "Deploy to <staging>.", "body": "1. Build.\n2. Migrate."}}})})
	if rep, err := rt.Consolidator.Run(context.Background()); err != nil || len(rep.Pending) != 1 {
		t.Fatalf("run: %+v %v", rep, err)
	}
	_, body := s.get("/skills")
	mustContain(t, body, "Waiting for review", "deploy-staging (new, draft) — Deploy to &lt;staging&gt;. · in dream 1", `<a href="/status">approve or reject it on the review page</a>`)
	mustNotContain(t, body, `<a href="/skills/deploy-staging">`)
	tip := strings.TrimSpace(s.git("rev-parse", "mindmount/dream/1"))
	if code, _ := s.post("/review/approve", url.Values{"n": {"1"}, "tip": {tip}, "next": {"/status"}}); code != http.StatusOK {
		t.Fatalf("approve: %d", code)
	}
	s.settle()
	_, body = s.get("/skills")
	mustContain(t, body, `<a href="/skills/deploy-staging">deploy-staging</a></td><td>draft`)
	mustNotContain(t, body, "Waiting for review")
}

// TestServeSkillsApart: under serve, a skill of bob's never appears on
// alice's pages, and alice cannot open bob's skills page.
func TestServeSkillsApart(t *testing.T) {
	ts, users := serveSite(t)
	bob := users["bob"].Dir
	writeFiles(t, bob, map[string]string{"skills/bobs-secret-way/SKILL.md": "---\nname: bobs-secret-way\ndescription: Canary of bob's.\n---\n1. Bob only.\n"})
	gitT(t, bob, "add", "-A")
	gitT(t, bob, "commit", "-qm", "bob's skill")
	// Bob's own page lists it (the runtime saw the commit) ...
	admin, _ := login(t, ts, "admin-key")
	deadline := time.Now().Add(60 * time.Second)
	for {
		_, body := do(t, admin, http.MethodGet, ts.URL+"/ui/u/bob/skills", nil)
		if strings.Contains(body, "Canary of bob") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the canary is not on bob's own skills page:\n%s", body)
		}
		time.Sleep(50 * time.Millisecond)
	}
	// ... and alice's never does.
	alice, code := login(t, ts, "tok-alice")
	if code != http.StatusOK {
		t.Fatalf("alice's login: %d", code)
	}
	for _, p := range []string{"/ui/u/alice/skills", "/ui/u/alice/skills/bobs-secret-way"} {
		_, body := do(t, alice, http.MethodGet, ts.URL+p, nil)
		if strings.Contains(body, "Canary of bob") || strings.Contains(body, "bobs-secret-way</a>") {
			t.Errorf("%s shows bob's skill:\n%s", p, body)
		}
	}
	if code, _ := do(t, alice, http.MethodGet, ts.URL+"/ui/u/alice/skills/bobs-secret-way", nil); code != http.StatusNotFound {
		t.Errorf("alice opens bob's skill name in her memory: %d, want 404", code)
	}
	for _, p := range []string{"/ui/u/bob/skills", "/ui/u/bob/skills/bobs-secret-way"} {
		if code, _ := do(t, alice, http.MethodGet, ts.URL+p, nil); code != http.StatusForbidden {
			t.Errorf("alice GET %s: %d, want 403", p, code)
		}
	}
}
