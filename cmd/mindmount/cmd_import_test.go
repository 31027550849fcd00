package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mindmount/mindmount/serve/host"
	"github.com/mindmount/mindmount/serve/httpapi"
)

// viralRepo makes a git repository in the reference's layout, from the
// migrate package's fixture, with the reference's own kind of history: an
// init commit, then "checkpoint DD.MM.YY" commits by its hook.
func viralRepo(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "alice")
	if err := os.CopyFS(dir, os.DirFS("../../fs/migrate/testdata/viral")); err != nil {
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
	runCmd(t, "import", "claude", "../../fs/migrate/testdata/claude", repo)
	runCmd(t, "import", "letta", "../../fs/migrate/testdata/letta", repo)
	runCmd(t, "import", "claude", "../../fs/migrate/testdata/claude/CLAUDE.md", repo)
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

// claudeSource writes a Claude Code memory folder (~/.claude's layout)
// holding one user memory per entry of notes (file name -> text).
func claudeSource(t *testing.T, dir string, notes map[string]string) string {
	t.Helper()
	mem := filepath.Join(dir, "projects", "p", "memory")
	if err := os.MkdirAll(mem, 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(mem, "MEMORY.md"), []byte("- notes\n"), 0o644)
	for name, text := range notes {
		if err := os.WriteFile(filepath.Join(mem, name), []byte("---\nname: n\ndescription: a note\ntype: user\n---\n"+text+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// runImportCmd runs mindmount in this process and returns its exit status
// and everything it printed.
func runImportCmd(args ...string) (int, string) {
	var out, errb bytes.Buffer
	code := run(args, &out, &errb)
	return code, out.String() + errb.String()
}

// TestImportRefusesSecrets: an import is a door like the mount: a Claude
// Code memory holding an AWS key or a GitHub token, a Letta block saying
// "my password is …", are refused with file and rule, never the value,
// and nothing is committed; "mindmount check" reports a secret that is
// already committed.
func TestImportRefusesSecrets(t *testing.T) {
	const aws, gh = "AKIAZ3MQR7WXPLKJH4TB", "ghp_" + "x9Kd83hQpLm2Vb7Ns4Wt6Yr1Zc5Fg0Jh8Ea3"
	for name, c := range map[string]struct {
		format, src string
		values      []string
	}{
		"claude": {"claude", claudeSource(t, t.TempDir(), map[string]string{"aws.md": "The deploy key is " + aws + " for prod.", "gh.md": "token " + gh}), []string{aws, gh}},
		"letta": {"letta", func() string {
			d := t.TempDir()
			os.MkdirAll(filepath.Join(d, "system"), 0o755)
			os.WriteFile(filepath.Join(d, "system", "human.md"), []byte("---\ndescription: the human\n---\nmy password is Tr0ub4dor-horse-77\n"), 0o644)
			return d
		}(), []string{"Tr0ub4dor-horse-77"}},
	} {
		dest := filepath.Join(t.TempDir(), "memory")
		code, out := runImportCmd("import", c.format, c.src, dest)
		if code == 0 || !strings.Contains(out, "secret found") || !strings.Contains(out, "rule ") {
			t.Errorf("%s: exit %d, want a refusal naming file and rule:\n%s", name, code, out)
		}
		for _, v := range c.values {
			if strings.Contains(out, v) {
				t.Errorf("%s: the refusal shows the secret:\n%s", name, out)
			}
		}
		if log := gitOut(t, dest, "log", "--format=%s"); strings.Contains(log, "import") {
			t.Errorf("%s: the import was committed:\n%s", name, log)
		}
		if exec.Command("git", "-C", dest, "grep", "-q", "-e", c.values[0], "HEAD").Run() == nil {
			t.Errorf("%s: HEAD holds the secret", name)
		}
	}
	// A secret committed beside mindmount (git commit --no-verify) is
	// reported by check, not only a new one.
	repo := filepath.Join(t.TempDir(), "memory")
	runCmd(t, "init", repo)
	os.WriteFile(filepath.Join(repo, "user_memory", "key.md"), []byte("---\ndescription: the key\n---\n# Key\n\n## Fact\nThe key is "+aws+".\n"), 0o644)
	gitOut(t, repo, "add", "-A")
	gitOut(t, repo, "commit", "-q", "--no-verify", "-m", "key")
	code, out := runImportCmd("check", repo)
	if code == 0 || !strings.Contains(out, "user_memory/key.md:") || !strings.Contains(out, "secret found") || strings.Contains(out, aws) {
		t.Errorf("check on a committed secret: exit %d\n%s", code, out)
	}
}

// TestImportRefusesHostileSources: the source root a symbolic link (eve's
// ~/.claude pointing at bob's), a viral repository whose SOUL.md or
// USER.md points outside it, a memory named with a newline: each is
// refused, nothing of the link's target is imported, and no raw newline
// reaches the output or a commit.
func TestImportRefusesHostileSources(t *testing.T) {
	bob := claudeSource(t, t.TempDir(), map[string]string{"private.md": "bob's private note"})
	eve := filepath.Join(t.TempDir(), ".claude")
	os.Symlink(bob, eve)
	dest := filepath.Join(t.TempDir(), "memory")
	if code, out := runImportCmd("import", "claude", eve, dest); code == 0 || !strings.Contains(out, "symbolic link") {
		t.Errorf("a linked source root: exit %d\n%s", code, out)
	}
	if _, err := os.Stat(filepath.Join(dest, "user_memory", "private.md")); err == nil {
		t.Error("bob's note was imported through eve's link")
	}

	outside := filepath.Join(t.TempDir(), "soul.md")
	os.WriteFile(outside, []byte("# Root's soul\n\nthe outside file\n"), 0o644)
	for _, link := range []string{"SOUL.md", "USER.md"} {
		src := viralRepo(t)
		os.Remove(filepath.Join(src, link))
		os.Symlink(outside, filepath.Join(src, link))
		gitOut(t, src, "add", "-A")
		gitOut(t, src, "commit", "-q", "-m", "link")
		dest := filepath.Join(t.TempDir(), "imported")
		code, out := runImportCmd("import", "viral", src, dest)
		if code == 0 || !strings.Contains(out, link+": a symbolic link") {
			t.Errorf("viral with %s a link outside: exit %d\n%s", link, code, out)
		}
		if b, err := os.ReadFile(filepath.Join(dest, "character.md")); err == nil && strings.Contains(string(b), "the outside file") {
			t.Errorf("viral with %s a link: its target was imported", link)
		}
	}

	src := claudeSource(t, t.TempDir(), map[string]string{"a\nb.md": "fine text", "ok.md": "fine too"})
	dest = filepath.Join(t.TempDir(), "memory")
	code, out := runImportCmd("import", "claude", src, dest)
	if code == 0 || !strings.Contains(out, "a b.md: the name holds control characters") || strings.Contains(out, "a\nb") {
		t.Errorf("a name with a newline: exit %d, want it refused and shown escaped:\n%s", code, out)
	}
	if log := gitOut(t, dest, "log", "--format=%B"); strings.Contains(log, "a\nb") || strings.Contains(log, "import claude") {
		t.Errorf("a name with a newline reached a commit:\n%s", log)
	}
}

// TestImportRefusesAnotherUsersLinkOnTheWay: a folder on the way to the
// source that is another user's symbolic link (eve's ~/.claude pointing at
// bob's, and root given ~/.claude/projects/p/memory under it) is refused
// like a linked source root: bob's note never reaches the repository
// built for eve.
func TestImportRefusesAnotherUsersLinkOnTheWay(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: the link belongs to another uid")
	}
	bob := claudeSource(t, t.TempDir(), map[string]string{"private.md": "bob's private note"})
	eve := filepath.Join(t.TempDir(), ".claude")
	if err := os.Symlink(bob, eve); err != nil {
		t.Fatal(err)
	}
	if err := os.Lchown(eve, aliceUID, aliceUID); err != nil {
		t.Fatal(err)
	}
	dest := filepath.Join(t.TempDir(), "memory")
	code, out := runImportCmd("import", "claude", filepath.Join(eve, "projects", "p", "memory"), dest)
	if code == 0 || !strings.Contains(out, "symbolic link") {
		t.Errorf("a source under another user's link: exit %d\n%s", code, out)
	}
	if _, err := os.Stat(filepath.Join(dest, "user_memory", "private.md")); err == nil {
		t.Error("bob's note was imported through eve's link on the way")
	}
}

// TestImportAsRootRunsAsOwner: root importing alice's folders runs as
// alice: her viral repository's planted core.fsmonitor never runs (the
// clean check reads with go-git), and the import leaves no file of
// root's in her tree; her Claude Code folder imported into her
// repository gives files that are hers.
func TestImportAsRootRunsAsOwner(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: the folders belong to another uid")
	}
	home := t.TempDir()
	reachable(home)
	src := filepath.Join(home, "viral")
	if err := os.Rename(viralRepo(t), src); err != nil {
		t.Fatal(err)
	}
	if err := host.GiveToUser(home, aliceUID, aliceUID); err != nil {
		t.Fatal(err)
	}
	p := plantGitPrograms(t, src, aliceUID)
	out, code := runBinary(t, []string{"HOME=/nonexistent"}, "import", "viral", src)
	p.ranAs(t, "mindmount import viral")
	if code != 0 || !strings.Contains(out, "Imported") {
		t.Errorf("import viral as root of alice's repository: exit %d\n%s", code, out)
	}
	if left := rootOwned(t, src); len(left) > 0 {
		t.Errorf("the import left files of root's in alice's repository: %v", left)
	}

	claude := claudeSource(t, filepath.Join(home, ".claude"), map[string]string{"tea.md": "likes green tea"})
	dest := filepath.Join(home, "memory")
	if err := host.GiveToUser(home, aliceUID, aliceUID); err != nil {
		t.Fatal(err)
	}
	out, code = runBinary(t, []string{"HOME=/nonexistent"}, "import", "claude", claude, dest)
	if code != 0 {
		t.Fatalf("import claude as root of alice's folder: exit %d\n%s", code, out)
	}
	if left := rootOwned(t, dest); len(left) > 0 {
		t.Errorf("the import left files of root's in alice's repository: %v", left)
	}
}

// TestImportHostileRepositoryRunsNoProgram: importing a repository whose
// configuration names a program (an unpacked hostile repository, root's
// own) runs none of it: the clean check reads with go-git and the clone
// runs git scrubbed.
func TestImportHostileRepositoryRunsNoProgram(t *testing.T) {
	src := viralRepo(t)
	reachable(src)
	p := plantGitPrograms(t, src, 0)
	code, out := runImportCmd("import", "viral", src, filepath.Join(t.TempDir(), "imported"))
	p.ranAs(t, "mindmount import viral")
	if code != 0 {
		t.Errorf("import: exit %d\n%s", code, out)
	}
}

// TestImportIsTheOnlyWriter: while another process holds a repository's
// daemon lock, neither form of import writes into it (it would be a second
// writer beside the daemon).
func TestImportIsTheOnlyWriter(t *testing.T) {
	src := viralRepo(t)
	holdDaemonLock(t, src)
	before := gitOut(t, src, "rev-parse", "HEAD")
	var out, errb bytes.Buffer
	if code := run([]string{"import", "viral", src}, &out, &errb); code == 0 || !strings.Contains(errb.String(), "second writer") {
		t.Fatalf("viral in place beside a daemon: exit %d\n%s%s", code, out.String(), errb.String())
	}
	if gitOut(t, src, "rev-parse", "HEAD") != before || gitOut(t, src, "status", "--porcelain") != "" {
		t.Fatal("the refused import changed the repository")
	}

	repo := filepath.Join(t.TempDir(), "memory")
	runCmd(t, "init", repo)
	claude := t.TempDir()
	os.WriteFile(filepath.Join(claude, "CLAUDE.md"), []byte("# Notes\n\nThe user prefers tea.\n"), 0o600)
	holdDaemonLock(t, repo)
	before = gitOut(t, repo, "rev-parse", "HEAD")
	out.Reset()
	errb.Reset()
	if code := run([]string{"import", "claude", claude, repo}, &out, &errb); code == 0 || !strings.Contains(errb.String(), "second writer") {
		t.Fatalf("claude beside a daemon: exit %d\n%s%s", code, out.String(), errb.String())
	}
	if gitOut(t, repo, "rev-parse", "HEAD") != before {
		t.Fatal("the refused import committed")
	}
}

// holdDaemonLock holds dir's daemon lock from another process (flock(1))
// until the test ends, as a running daemon would.
func holdDaemonLock(t *testing.T, dir string) {
	t.Helper()
	cmd := exec.Command("flock", "-n", filepath.Join(dir, ".git", "mindmount-daemon.lock"), "sh", "-c", "echo held; exec sleep 600")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("flock(1): %v", err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || line != "held\n" {
		t.Fatalf("flock did not take the lock: %q %v", line, err)
	}
}
