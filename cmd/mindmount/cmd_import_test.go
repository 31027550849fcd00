package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mindmount/mindmount/cmd/mindmount/internal/httpapi"
)

// viralRepo makes a git repository in the reference's layout, from the
// migrate package's fixture, with the reference's own kind of history: an
// init commit, then "checkpoint DD.MM.YY" commits by its hook.
func viralRepo(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "alice")
	if err := os.CopyFS(dir, os.DirFS("../../cmd/mindmount/internal/migrate/testdata/viral")); err != nil {
		t.Fatal(err)
	}
	late := filepath.Join(dir, "user_memory", "moved-to-lisbon.md")
	data, _ := os.ReadFile(late)
	os.Remove(late)
	os.WriteFile(filepath.Join(dir, ".gitignore"), []byte(".transcript_*\n.consolidation.log\n.consolidation.lock\n.git_credentials.json\n"), 0o644)
	gitOut(t, dir, "init", "-q", "-b", "main")
	gitOut(t, dir, "add", "-A")
	gitOut(t, dir, "commit", "-q", "-m", "init")
	os.WriteFile(late, data, 0o644)
	gitOut(t, dir, "add", "-A")
	gitOut(t, dir, "commit", "-q", "-m", "checkpoint 06.09.26")
	// The reference's ignored leftovers are not changes.
	os.WriteFile(filepath.Join(dir, ".consolidation.log"), []byte("[git] committed\n"), 0o644)
	return dir
}

// TestImportViral: a repository of the reference is recognised by check
// (not "all valid"), imported into a new folder keeping its history under
// one import commit, and then checks valid, ranks the pinned and most used
// memories first in its index and context, and is recalled; the original
// is left as it was.
func TestImportViral(t *testing.T) {
	src := viralRepo(t)
	before := gitOut(t, src, "rev-parse", "HEAD")
	var out, errb bytes.Buffer
	if code := run([]string{"check", src}, &out, &errb); code == 0 || !strings.Contains(errb.String(), "looks like a viral-git-agent-memory repository: run mindmount import viral "+src) {
		t.Fatalf("check on the reference's repository: exit %d\n%s%s", code, out.String(), errb.String())
	}
	out.Reset()
	errb.Reset()
	if code := run([]string{"index", src}, &out, &errb); code == 0 || !strings.Contains(errb.String(), "run mindmount import viral "+src) {
		t.Fatalf("index on the reference's repository: exit %d\n%s%s", code, out.String(), errb.String())
	}
	dest := filepath.Join(t.TempDir(), "imported")
	msg := runCmd(t, "import", "viral", src, dest)
	if !strings.Contains(msg, "USER_memory/Has_Dog_Pixel.md -> user_memory/has-dog-pixel.md") || !strings.Contains(msg, "(pinned)") {
		t.Fatalf("import said:\n%s", msg)
	}
	if gitOut(t, src, "rev-parse", "HEAD") != before || gitOut(t, src, "status", "--porcelain") != "" {
		t.Fatal("the original repository changed")
	}
	log := gitOut(t, dest, "log", "--format=%s")
	if subjects := strings.Split(log, "\n"); len(subjects) != 3 || !strings.HasPrefix(subjects[0], "mindmount import viral") || subjects[1] != "checkpoint 06.09.26" || subjects[2] != "init" {
		t.Fatalf("history:\n%s", log)
	}
	if st := gitOut(t, dest, "status", "--porcelain"); st != "" {
		t.Fatalf("work tree after the import:\n%s", st)
	}
	if remotes := gitOut(t, dest, "remote"); remotes != "" {
		t.Fatalf("the clone still points at the old repository: %s", remotes)
	}
	runCmd(t, "check", dest)
	idx := runCmd(t, "index", dest)
	lines := strings.Split(strings.TrimSpace(idx), "\n")
	var order []string
	for _, l := range lines {
		for _, slug := range []string{"peanut-allergy", "likes-coffee", "works-as-engineer", "has-dog-pixel", "moved-to-lisbon", "lives-in-berlin"} {
			if strings.Contains(l, "user_memory/"+slug) || strings.Contains(l, slug+".md") {
				order = append(order, slug)
			}
		}
	}
	if strings.Join(order, " ") != "peanut-allergy likes-coffee works-as-engineer has-dog-pixel moved-to-lisbon" {
		t.Fatalf("index order %v:\n%s", order, idx)
	}
	ctx := runCmd(t, "context", dest)
	if !strings.Contains(ctx, "You are a warm, concise assistant.") || !strings.Contains(ctx, "User ID: alice") || !strings.Contains(ctx, "Peanut Allergy") {
		t.Fatalf("context:\n%s", ctx)
	}
	var hits []httpapi.Hit
	json.Unmarshal([]byte(runCmd(t, "recall", dest, "coffee", "--json")), &hits)
	if len(hits) == 0 || hits[0].Path != "user_memory/likes-coffee.md" {
		t.Fatalf("recall: %+v", hits)
	}
	// Imported once, it is not the reference's any more.
	if code := run([]string{"import", "viral", dest}, &out, &errb); code == 0 {
		t.Fatal("a second import ran")
	}
}

// TestImportViralRefusesDirty: uncommitted changes are not swept into the
// import's commit nor lost in a clone.
func TestImportViralRefusesDirty(t *testing.T) {
	src := viralRepo(t)
	os.WriteFile(filepath.Join(src, "USER_memory", "new-fact.md"), []byte("# New Fact\n\n## Fact\nx\n"), 0o644)
	var out, errb bytes.Buffer
	if code := run([]string{"import", "viral", src}, &out, &errb); code == 0 || !strings.Contains(errb.String(), "uncommitted") {
		t.Fatalf("exit %d\n%s%s", code, out.String(), errb.String())
	}
	if _, err := os.Stat(filepath.Join(src, "SOUL.md")); err != nil {
		t.Fatal("the refused import changed the repository")
	}
}

// TestImportClaudeAndLetta: Claude Code's memory (~/.claude, or one
// CLAUDE.md) and a Letta MemFS folder go into a new mindmount repository
// in one commit each; the result checks valid, CONTEXT.md holds the
// always-in-context parts, and the rest is recalled or listed.
func TestImportClaudeAndLetta(t *testing.T) {
	repo := filepath.Join(t.TempDir(), "memory")
	runCmd(t, "import", "claude", "../../cmd/mindmount/internal/migrate/testdata/claude", repo)
	runCmd(t, "import", "letta", "../../cmd/mindmount/internal/migrate/testdata/letta", repo)
	runCmd(t, "import", "claude", "../../cmd/mindmount/internal/migrate/testdata/claude/CLAUDE.md", repo)
	runCmd(t, "check", repo)
	subjects := strings.Split(gitOut(t, repo, "log", "--format=%s"), "\n")
	if len(subjects) != 4 || !strings.HasPrefix(subjects[0], "mindmount import claude: 1 files") || !strings.HasPrefix(subjects[1], "mindmount import letta: 5 files") || !strings.HasPrefix(subjects[2], "mindmount import claude: 6 files") {
		t.Fatalf("history %q", subjects)
	}
	if st := gitOut(t, repo, "status", "--porcelain"); st != "" {
		t.Fatalf("work tree:\n%s", st)
	}
	ctx := runCmd(t, "context", repo)
	for _, want := range []string{"I am a Letta agent.", "Name: Sam.", "Use pnpm, not npm.", "draft pull request", "Backend engineer, new to the React side", "Never mock the database", "Merge freeze begins 2026-03-05"} {
		if !strings.Contains(ctx, want) {
			t.Errorf("context lacks %q", want)
		}
	}
	if _, err := os.Stat(filepath.Join(repo, "system", "claude-code-2.md")); err != nil {
		t.Error("the second CLAUDE.md import replaced the first")
	}
	var hits []httpapi.Hit
	json.Unmarshal([]byte(runCmd(t, "recall", repo, "React backend", "--json")), &hits)
	if len(hits) == 0 || hits[0].Path != "user_memory/user-role.md" {
		t.Fatalf("recall: %+v", hits)
	}
}

// TestSyncAloneSaysWhatToDo: sync without a daemon names the uncommitted
// changes it cannot sync and what would commit them.
func TestSyncAloneSaysWhatToDo(t *testing.T) {
	dir := t.TempDir()
	repo := filepath.Join(dir, "m")
	runCmd(t, "init", repo)
	gitOut(t, dir, "init", "-q", "--bare", "r.git")
	runCmd(t, "remote", "set", repo, filepath.Join(dir, "r.git"))
	runCmd(t, "sync", repo)
	f, _ := os.OpenFile(filepath.Join(repo, "user.md"), os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString("\nLikes tea.\n")
	f.Close()
	out := runCmd(t, "sync", repo)
	if !strings.Contains(out, "1 uncommitted change(s) in "+repo+" are not synced") || !strings.Contains(out, "mindmount watch "+repo) {
		t.Fatalf("sync said:\n%s", out)
	}
}
