package main

import (
	"bufio"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mindmount/mindmount/serve/host"
)

// readFixture reads a txtar archive ("-- name --" lines, each followed by
// the file's content) into name -> content, with $REPO and $BIN replaced.
func readFixture(t *testing.T, path, repo, bin string) map[string]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	files := map[string]string{}
	name := ""
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		l := sc.Text()
		if strings.HasPrefix(l, "-- ") && strings.HasSuffix(l, " --") {
			name = strings.TrimSuffix(strings.TrimPrefix(l, "-- "), " --")
			files[name] = ""
			continue
		}
		if name != "" {
			files[name] += strings.NewReplacer("$REPO", repo, "$BIN", bin).Replace(l) + "\n"
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return files
}

// writeFixture writes the files of fx under prefix into dir.
func writeFixture(t *testing.T, fx map[string]string, prefix, dir string) {
	t.Helper()
	for name, data := range fx {
		rel, ok := strings.CutPrefix(name, prefix)
		if !ok {
			continue
		}
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		mode := os.FileMode(0o644)
		if strings.HasPrefix(rel, "hooks/") {
			mode = 0o755
		}
		if err := os.WriteFile(p, []byte(data), mode); err != nil {
			t.Fatal(err)
		}
	}
}

// legacyRepo builds, with the git CLI, the repository the last build before
// the rename left (testdata/upgrade-repo.txtar), plus what was not
// committed: an invalid memory, the transcript already consolidated, and
// the watch mode's status and index files.
func legacyRepo(t *testing.T) (repo, home string, fx map[string]string) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git CLI not installed")
	}
	top := t.TempDir()
	repo, home = filepath.Join(top, "memory"), filepath.Join(top, "home")
	fx = readFixture(t, "testdata/upgrade-repo.txtar", repo, "/usr/local/bin/engram")
	writeFixture(t, fx, "repo/", repo)
	gitOut(t, repo, "init", "-q", "-b", "main")
	gitOut(t, repo, "add", "-A")
	gitOut(t, repo, "commit", "-q", "-m", "engram init: add character.md, user.md, README.md, .gitattributes and 5 more")
	writeFixture(t, fx, "git/", filepath.Join(repo, ".git"))
	writeFixture(t, fx, "home/", home)
	extra := map[string]string{
		"user_memory/broken.md":        "# no frontmatter, so no description\n",
		"transcripts/chat.jsonl":       "{\"role\":\"user\",\"content\":\"I moved to Lisbon last month.\"}\n{\"role\":\"assistant\",\"content\":\"Nice!\"}\n",
		".engram/status":               "invalid: user_memory/broken.md\n",
		".engram/index/user_memory.md": "# index\n",
	}
	for rel, data := range extra {
		p := filepath.Join(repo, filepath.FromSlash(rel))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// What a stopped old daemon leaves in .git.
	if err := os.WriteFile(filepath.Join(repo, ".git", "engram-daemon.lock"), []byte("4242\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return repo, home, fx
}

// TestInitUpgradesEarlierRepository: one "mindmount init" turns a
// repository made by the last build before the rename into a working
// mindmount repository, in one commit, keeping its cursor, its settings and
// its uncommitted invalid file.
func TestInitUpgradesEarlierRepository(t *testing.T) {
	repo, _, fx := legacyRepo(t)
	before := gitOut(t, repo, "rev-parse", "HEAD")

	// Until then the daemons refuse it: they would ignore the cursor.
	if _, _, err := host.OpenRepo(repo); !errors.Is(err, host.ErrNotUpgraded) {
		t.Fatalf("OpenRepo before the upgrade: %v, want ErrNotUpgraded", err)
	}

	// So do the commands: consolidate would start again from an empty cursor.
	for _, args := range [][]string{{"consolidate", repo}, {"index", repo}, {"sync", repo}, {"mcp", repo}} {
		var so, se strings.Builder
		if code := run(args, &so, &se); code == 0 || !strings.Contains(se.String(), `run "mindmount init `+repo+`" once to upgrade it`) {
			t.Errorf("mindmount %s before the upgrade: exit %d\n%s%s", args[0], code, so.String(), se.String())
		}
	}

	out := runCmd(t, "init", repo)
	for _, want := range []string{"Upgraded " + repo, ".engram/cursor.json -> .mindmount/cursor.json",
		".engram/settings -> .mindmount/settings", ".git/engram/ -> .git/mindmount/", "Committed "} {
		if !strings.Contains(out, want) {
			t.Errorf("init output lacks %q:\n%s", want, out)
		}
	}

	// One commit, by mindmount, saying so.
	if n := gitOut(t, repo, "rev-list", "--count", before+"..HEAD"); n != "1" {
		t.Fatalf("%s commits after the fixture's, want 1:\n%s", n, gitOut(t, repo, "log", "--stat"))
	}
	if s := gitOut(t, repo, "log", "-1", "--format=%an|%s"); s != "mindmount|mindmount init: upgrade a repository made before the rename (engram is now mindmount)" {
		t.Errorf("upgrade commit: %q", s)
	}
	// git sees the state files renamed, content unchanged.
	renames := gitOut(t, repo, "show", "-M100%", "--format=", "--name-status", "HEAD")
	for _, want := range []string{"R100\t.engram/cursor.json\t.mindmount/cursor.json", "R100\t.engram/settings\t.mindmount/settings"} {
		if !strings.Contains(renames, want) {
			t.Errorf("HEAD lacks %q:\n%s", want, renames)
		}
	}
	gitOut(t, repo, "fsck", "--strict", "--no-progress")

	// The work tree: the state moved (ignored files too), nothing else
	// committed; the invalid memory is still there and still uncommitted.
	if _, err := os.Lstat(filepath.Join(repo, ".engram")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf(".engram still there: %v", err)
	}
	for rel, want := range map[string]string{
		".mindmount/cursor.json":          fx["repo/.engram/cursor.json"],
		".mindmount/settings":             fx["repo/.engram/settings"],
		".mindmount/index/user_memory.md": "# index\n",
		"user_memory/broken.md":           "# no frontmatter, so no description\n",
	} {
		if b, err := os.ReadFile(filepath.Join(repo, rel)); err != nil || string(b) != want {
			t.Errorf("%s = %q, %v; want %q", rel, b, err, want)
		}
	}
	if st := gitOut(t, repo, "status", "--porcelain"); st != "?? user_memory/broken.md" {
		t.Errorf("git status after the upgrade:\n%s", st)
	}

	// Nothing in the tree or in .git names the old program any more, but
	// for history the cursor quotes (its last run's commit message).
	if g, err := exec.Command("git", "-C", repo, "grep", "-il", "engram", "HEAD", "--", ":!.mindmount/cursor.json").Output(); err == nil {
		t.Errorf("tracked files still name the old program:\n%s", g)
	}
	for _, rel := range []string{"config", "hooks/pre-commit", "info/attributes"} {
		b, err := os.ReadFile(filepath.Join(repo, ".git", rel))
		if err != nil || strings.Contains(string(b), "engram") || !strings.Contains(string(b), "mindmount") {
			t.Errorf(".git/%s after the upgrade (%v):\n%s", rel, err, b)
		}
	}
	ents, _ := os.ReadDir(filepath.Join(repo, ".git"))
	for _, e := range ents {
		if strings.Contains(e.Name(), "engram") {
			t.Errorf(".git/%s left behind", e.Name())
		}
	}
	if _, err := os.Stat(filepath.Join(repo, ".git", "mindmount", "cursor-floor.json")); err != nil {
		t.Errorf("cursor floor not moved: %v", err)
	}
	// git itself resolves the renamed merge drivers.
	if a := gitOut(t, repo, "check-attr", "merge", ".mindmount/cursor.json", "user.md"); a != ".mindmount/cursor.json: merge: mindmount-cursor\nuser.md: merge: mindmount-memory" {
		t.Errorf("check-attr:\n%s", a)
	}
	if d := gitOut(t, repo, "config", "merge.mindmount-memory.driver"); d != "mindmount merge-memory %O %A %B %P" {
		t.Errorf("driver %q", d)
	}

	// A working mindmount repository: the daemons open it, the invalid
	// file is reported, the settings apply, the cursor still knows the
	// consolidated transcript (so nothing is consolidated twice: with no
	// model reachable, a lost cursor would be a failed run).
	if _, _, err := host.OpenRepo(repo); err != nil {
		t.Fatalf("OpenRepo after the upgrade: %v", err)
	}
	var so, se strings.Builder
	code := run([]string{"status", repo}, &so, &se)
	if !strings.Contains(so.String(), "user_memory/broken.md") {
		t.Errorf("status (exit %d) does not report the invalid file:\n%s%s", code, so.String(), se.String())
	}
	for _, kv := range noModel {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	cons := runCmd(t, "consolidate", repo)
	if !strings.Contains(cons, "nothing new") {
		t.Errorf("consolidate after the upgrade:\n%s", cons)
	}
	if n := gitOut(t, repo, "rev-list", "--count", before+"..HEAD"); n != "1" {
		t.Errorf("consolidate committed after the upgrade: %s commits", n)
	}

	// Running init again changes nothing.
	if again := runCmd(t, "init", repo); !strings.Contains(again, "already initialised") {
		t.Errorf("second init:\n%s", again)
	}
	if n := gitOut(t, repo, "rev-list", "--count", before+"..HEAD"); n != "1" {
		t.Errorf("second init committed: %s commits", n)
	}
}

// TestHooksInstallReplacesEarlierEntries: "mindmount hooks install" over the
// hooks, MCP servers and instruction blocks the old build installed leaves
// one set of mindmount's entries and none of the old ones.
func TestHooksInstallReplacesEarlierEntries(t *testing.T) {
	repo, home, fx := legacyRepo(t)
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", "")
	t.Setenv("CODEX_HOME", "")
	runCmd(t, "init", repo)
	for _, h := range []string{"claude-code", "codex", "gemini-cli", "opencode"} {
		runCmd(t, "hooks", "install", "--harness", h, repo)
	}
	for name := range fx {
		rel, ok := strings.CutPrefix(name, "home/")
		if !ok {
			continue
		}
		b, err := os.ReadFile(filepath.Join(home, rel))
		if err != nil {
			t.Errorf("%s: %v", rel, err)
			continue
		}
		s := string(b)
		if strings.Contains(s, "engram") {
			t.Errorf("%s still names the old program:\n%s", rel, s)
		}
		// One set of entries: each of ours once (hooks: one per event).
		if !strings.Contains(s, "mindmount") {
			t.Errorf("%s has no mindmount entry:\n%s", rel, s)
		}
		if strings.HasSuffix(rel, ".md") && strings.Count(s, "mindmount:begin") != 1 {
			t.Errorf("%s: want one instructions block:\n%s", rel, s)
		}
		if strings.Contains(s, "hook stop") && strings.Count(s, "hook stop") != 1 {
			t.Errorf("%s: the stop hook is installed %d times:\n%s", rel, strings.Count(s, "hook stop"), s)
		}
	}
	// The old settings hold only the earlier build's entries (ours, under
	// the old name): replacing them needs no backup (harness.Install).
	backups, _ := filepath.Glob(filepath.Join(home, ".claude", "settings.json.mindmount-backup-*"))
	if len(backups) != 0 {
		t.Errorf("backups of settings.json: %v", backups)
	}
}

// TestInitLeavesOtherEngramAlone: a repository the old build never touched
// is not "upgraded" because its README or .gitignore names a folder
// .engram/ (another program of that name keeps its data there).
func TestInitLeavesOtherEngramAlone(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git CLI not installed")
	}
	dir := t.TempDir()
	readme := "Notes. The other tool keeps its data in `.engram/`.\n"
	ignore := ".engram/\n"
	os.WriteFile(filepath.Join(dir, "README.md"), []byte(readme), 0o644)
	os.WriteFile(filepath.Join(dir, ".gitignore"), []byte(ignore), 0o644)
	gitOut(t, dir, "init", "-q", "-b", "main")
	gitOut(t, dir, "add", "-A")
	gitOut(t, dir, "commit", "-q", "-m", "mine")
	out := runCmd(t, "init", dir)
	if strings.Contains(out, "Upgraded") {
		t.Errorf("init upgraded a repository the old build never made:\n%s", out)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "README.md")); string(b) != readme {
		t.Errorf("README.md rewritten:\n%s", b)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, ".gitignore")); !strings.HasPrefix(string(b), ignore) {
		t.Errorf(".gitignore rewritten:\n%s", b)
	}
}
