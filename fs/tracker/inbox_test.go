package tracker_test

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mindmount/mindmount/fs/tracker"
	"github.com/mindmount/mindmount/fs/tracker/conformance"
	"github.com/mindmount/mindmount/memgraph"
	"github.com/mindmount/mindmount/memgraph/recall"
	"github.com/mindmount/mindmount/memgraph/secret/secrettest"
)

// Planted secrets, split so no scanner mistakes this file for a leak.
var (
	stripeKey = "sk_live_" + "u8jzPde0IgxLd6GncfBAepfJ"
	awsKey    = "AKIA" + "IOSFODNN7EXAMPLE"
	ghToken   = "ghp_" + "x9Kd83hQpLm2Vb7Ns4Wt6Yr1Zc5Fg0Jh8Ea3"
)

// TestTranscriptsNeverCommitted is the transcripts rule (issue 14, defect
// 3) through watch mode, on a repository whose .gitignore does not ignore
// transcripts/ (made before the rule): the transcript is never committed,
// subscribers (the consolidator) still hear of it, and none of its text —
// secrets included — is in any git object.
func TestTranscriptsNeverCommitted(t *testing.T) {
	dir := conformance.NewRepo(t)
	old := strings.Replace(conformance.Ignore, "/transcripts/*\n!/transcripts/.gitkeep\n", "", 1)
	if old == conformance.Ignore {
		t.Fatal("the fixture .gitignore changed: update this test")
	}
	conformance.WriteFile(t, dir, ".gitignore", old) // committed by recovery at start
	var mu sync.Mutex
	var heard []string
	tr, _ := watch(t, dir, tracker.Config{Debounce: 100 * time.Millisecond, Listener: tracker.Listener{
		Changed: func(paths []string) { mu.Lock(); heard = append(heard, paths...); mu.Unlock() }}})
	chat := "User: my password is hunter2 and the key is " + stripeKey + "\nAssistant: please rotate it.\nUser: I live in Porto, by the river.\n"
	conformance.WriteFile(t, dir, "transcripts/chat.md", chat)
	conformance.WriteFile(t, dir, "transcripts/sub/day.jsonl", `{"role":"user","content":"`+awsKey+` is my key"}`+"\n")
	conformance.WriteFile(t, dir, "user_memory/lives-by-river.md", conformance.Memory("Lives by a river", "Lives By River", "You live by a river."))
	settle(t, tr)
	if files := sh(t, dir, "git ls-files"); strings.Contains(files, "transcripts/chat.md") || strings.Contains(files, "day.jsonl") ||
		!strings.Contains(files, "user_memory/lives-by-river.md") {
		t.Fatalf("git ls-files:\n%s", files)
	}
	mu.Lock()
	got := slices.Clone(heard)
	mu.Unlock()
	if !slices.Contains(got, "transcripts/chat.md") || !slices.Contains(got, "transcripts/sub/day.jsonl") {
		t.Fatalf("subscribers heard %v", got)
	}
	if st := string(tr.Status()); strings.Contains(st, "transcripts/") {
		t.Fatalf("a transcript is reported as pending or invalid:\n%s", st)
	}
	secrettest.ScanRepo(t, dir, []string{"hunter2", stripeKey, awsKey, "by the river"}, "transcripts")
}

// TestSecretInMemoryNotCommitted: a memory written with a secret is kept
// out of git and reported in the status by file, line and rule, never by
// value; once the secret is removed the file is committed.
func TestSecretInMemoryNotCommitted(t *testing.T) {
	dir := conformance.NewRepo(t)
	tr, _ := watch(t, dir, tracker.Config{Debounce: 100 * time.Millisecond})
	withKey := conformance.Memory("Shop setup", "Shop Setup", "Your shop uses the key "+stripeKey+".")
	conformance.WriteFile(t, dir, "user_memory/shop-setup.md", withKey)
	settle(t, tr)
	if files := sh(t, dir, "git ls-files"); strings.Contains(files, "shop-setup") {
		t.Fatal("a memory holding a secret was committed")
	}
	st := string(tr.Status())
	if !strings.Contains(st, "user_memory/shop-setup.md:") || !strings.Contains(st, "secret found (rule ") || strings.Contains(st, stripeKey) {
		t.Fatalf("status:\n%s", st)
	}
	secrettest.ScanRepo(t, dir, []string{stripeKey}, "user_memory")
	conformance.WriteFile(t, dir, "user_memory/shop-setup.md", conformance.Memory("Shop setup", "Shop Setup", "Your shop uses Stripe."))
	settle(t, tr)
	if files := sh(t, dir, "git ls-files"); !strings.Contains(files, "shop-setup") {
		t.Fatal("the fixed memory was not committed")
	}
	if st := string(tr.Status()); strings.Contains(st, "secret found") {
		t.Fatalf("status still reports the secret:\n%s", st)
	}
}

// TestCommitSecretsSetting: with the setting on, such a file is committed.
func TestCommitSecretsSetting(t *testing.T) {
	dir := conformance.NewRepo(t)
	tr, _ := watch(t, dir, tracker.Config{Debounce: 100 * time.Millisecond, CommitSecrets: true})
	conformance.WriteFile(t, dir, "notes/keys.md", "# Keys\n\n"+awsKey+"\n")
	settle(t, tr)
	if files := sh(t, dir, "git ls-files"); !strings.Contains(files, "notes/keys.md") {
		t.Fatal("CommitSecrets: the file was not committed")
	}
}

func TestSecretProblems(t *testing.T) {
	probs := tracker.SecretProblems("notes/a.md", []byte("a\nkey "+stripeKey+"\n"), nil)
	if len(probs) != 1 || probs[0].Line != 2 || !strings.Contains(probs[0].Msg, "stripe") || strings.Contains(probs[0].String(), stripeKey) {
		t.Fatalf("problems %v", probs)
	}
	// A secret already committed does not block later edits of the file.
	prev := []byte("key " + stripeKey + "\n")
	if probs := tracker.SecretProblems("notes/a.md", append(prev, "more\n"...), prev); len(probs) != 0 {
		t.Fatalf("old secret reported again: %v", probs)
	}
	// Issue 23, item 5: binary files and files over 4 MiB are scanned too.
	if probs := tracker.SecretProblems("x.bin", []byte("\x00"+stripeKey), nil); len(probs) != 1 {
		t.Fatal("a binary file is not scanned")
	}
	big := append(bytes.Repeat([]byte("ordinary words of a long note\n"), (5<<20)/30), stripeKey...)
	if probs := tracker.SecretProblems("notes/big.md", big, nil); len(probs) != 1 || probs[0].Line != (5<<20)/30+1 {
		t.Fatalf("a 5 MiB file: %v", probs)
	}
	name := "attachments/" + ghToken + ".txt"
	if probs := tracker.NameProblems(name); len(probs) != 1 || strings.Contains(probs[0].String(), ghToken) {
		t.Fatalf("a secret in a name: %v", probs)
	}
}

func TestIsInbox(t *testing.T) {
	for rel, want := range map[string]bool{
		"transcripts/a.jsonl": true, "transcripts/sub/b.md": true, "transcripts/.gitkeep": false,
		"user_memory/transcripts.md": false, "notes/transcripts/a.md": false, "transcriptsx/a": false,
	} {
		if got := tracker.IsInbox(rel); got != want {
			t.Errorf("IsInbox(%q) = %v", rel, got)
		}
	}
}

// TestCommitSecretsNotFromSettingsFile (issue 23, item 3): commit_secrets
// in the tracked settings file — committed before this rule (the upgrade
// path) or written by an agent now — is reported and ignored: a memory
// with a key stays out of git.
func TestCommitSecretsNotFromSettingsFile(t *testing.T) {
	dir := conformance.NewRepo(t)
	conformance.WriteFile(t, dir, ".mindmount/settings", "commit_secrets: true\n")
	sh(t, dir, "git add .mindmount/settings && git -c user.name=t -c user.email=t@e commit -q --no-verify -m old-setting")
	tr, _ := watch(t, dir, tracker.Config{Debounce: 100 * time.Millisecond})
	conformance.WriteFile(t, dir, "notes/keys.md", "# Keys\n\n"+awsKey+"\n")
	conformance.WriteFile(t, dir, ".mindmount/settings", "index_tokens: 3000\ncommit_secrets: true\n")
	settle(t, tr)
	if files := sh(t, dir, "git ls-files"); strings.Contains(files, "notes/keys.md") {
		t.Fatal("commit_secrets: true in the tracked settings file let a secret into git")
	}
	st := string(tr.Status())
	if !strings.Contains(st, ".mindmount/settings:2: commit_secrets is ignored here") {
		t.Fatalf("status does not report the tracked switch:\n%s", st)
	}
	secrettest.ScanRepo(t, dir, []string{awsKey}, "notes")
}

// TestCommitSecretsFromOperatorFile: the operator's file in the git
// directory does what the Config field does, and a running tracker
// follows it without a restart.
func TestCommitSecretsFromOperatorFile(t *testing.T) {
	dir := conformance.NewRepo(t)
	tr, _ := watch(t, dir, tracker.Config{Debounce: 100 * time.Millisecond})
	conformance.WriteFile(t, dir, "notes/keys.md", "# Keys\n\n"+awsKey+"\n")
	settle(t, tr)
	if files := sh(t, dir, "git ls-files"); strings.Contains(files, "notes/keys.md") {
		t.Fatal("committed without the operator's switch")
	}
	if err := os.MkdirAll(filepath.Join(dir, ".git", "mindmount"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".git", "mindmount", "config"), []byte("commit_secrets: true\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	conformance.WriteFile(t, dir, "notes/keys.md", "# Keys\n\n"+awsKey+"\nmore\n")
	settle(t, tr)
	if files := sh(t, dir, "git ls-files"); !strings.Contains(files, "notes/keys.md") {
		t.Fatal("commit_secrets: true in .git/mindmount/config: the file was not committed")
	}
}

// TestNoUnscannedBytes (issue 23, item 5), through the tracker: a text
// ending in a NUL byte, a 5 MiB file and a file whose name holds a token
// all stay out of git, and neither the status nor the log shows a value.
func TestNoUnscannedBytes(t *testing.T) {
	dir := conformance.NewRepo(t)
	var logs bytes.Buffer
	tr, _ := watch(t, dir, tracker.Config{Debounce: 100 * time.Millisecond, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	conformance.WriteFile(t, dir, "notes/nul.txt", "# Keys\n\nkey "+stripeKey+"\n\x00")
	conformance.WriteFile(t, dir, "notes/big.txt", strings.Repeat("ordinary words of a long note\n", (5<<20)/30)+"key "+awsKey+"\n")
	conformance.WriteFile(t, dir, "attachments/"+ghToken+".txt", "harmless\n")
	conformance.WriteFile(t, dir, "notes/ok.md", "# Fine\n")
	settle(t, tr)
	files := sh(t, dir, "git ls-files")
	if !strings.Contains(files, "notes/ok.md") {
		t.Fatalf("the harmless file was not committed:\n%s", files)
	}
	for _, f := range []string{"notes/nul.txt", "notes/big.txt", "attachments/"} {
		if strings.Contains(files, f) {
			t.Errorf("%s was committed", f)
		}
	}
	st := string(tr.Status())
	for _, want := range []string{"notes/nul.txt:3: secret found", "notes/big.txt:", "attachments/[REDACTED:"} {
		if !strings.Contains(st, want) {
			t.Errorf("status lacks %q:\n%s", want, st)
		}
	}
	for _, v := range []string{stripeKey, awsKey, ghToken} {
		if strings.Contains(st, v) || strings.Contains(logs.String(), v) {
			t.Errorf("status or log holds %s…", v[:6])
		}
	}
	secrettest.ScanRepo(t, dir, []string{stripeKey, awsKey, ghToken}, "notes", "attachments")
}

// TestHeldBackNeverReachesAModel (issue 23, item 6): a memory refused for a
// secret is not indexed, recalled or put into the context; the committed
// version keeps serving, and a new file with a secret serves nothing.
func TestHeldBackNeverReachesAModel(t *testing.T) {
	dir := conformance.NewRepo(t)
	tr, g := watch(t, dir, tracker.Config{Debounce: 100 * time.Millisecond})
	conformance.WriteFile(t, dir, "user_memory/shop-setup.md", conformance.Memory("Runs an online tea shop", "Shop Setup", "You run an online tea shop."))
	settle(t, tr)
	conformance.WriteFile(t, dir, "user_memory/shop-setup.md", conformance.Memory("Runs an online tea shop with key "+stripeKey, "Shop Setup", "Your shop key is "+stripeKey+"."))
	conformance.WriteFile(t, dir, "user_memory/aws-setup.md", conformance.Memory("AWS account of the shop", "AWS Setup", "The access key is "+awsKey+"."))
	settle(t, tr)
	if files := sh(t, dir, "git ls-files user_memory"); strings.Contains(files, "aws-setup") {
		t.Fatal("the new memory with a key was committed")
	}
	surfaces := map[string]string{
		"context": string(g.Context(memgraph.ContextOptions{})),
		"index":   string(g.Index(memgraph.KindUser)),
	}
	for _, q := range []string{"shop key", "tea shop", "AWS access key"} {
		for _, h := range g.Recall(q, recall.Options{K: 10}) {
			surfaces["recall "+q] += h.Path + " " + h.Description + " " + h.Snippet + "\n"
		}
	}
	for name, text := range surfaces {
		if strings.Contains(text, stripeKey) || strings.Contains(text, awsKey) || strings.Contains(text, "aws-setup") {
			t.Errorf("%s holds a held-back version:\n%s", name, text)
		}
	}
	if !strings.Contains(surfaces["context"], "Runs an online tea shop") {
		t.Errorf("the committed version is not served:\n%s", surfaces["context"])
	}
	// The generated files of watch mode too.
	for _, f := range []string{"CONTEXT.md", "user_memory.md"} {
		b, _ := os.ReadFile(filepath.Join(dir, f))
		if strings.Contains(string(b), stripeKey) || strings.Contains(string(b), awsKey) {
			t.Errorf("%s holds a held-back version", f)
		}
	}
}

// TestHeldBackAtStart: a memory with a secret left on disk while no daemon
// ran is held back at start, and the graph the daemon serves from never
// shows it.
func TestHeldBackAtStart(t *testing.T) {
	dir := conformance.NewRepo(t)
	conformance.WriteFile(t, dir, "user_memory/aws-setup.md", conformance.Memory("AWS account of the shop", "AWS Setup", "The access key is "+awsKey+"."))
	_, g := watch(t, dir, tracker.Config{Debounce: 100 * time.Millisecond})
	if ctx := string(g.Context(memgraph.ContextOptions{})); strings.Contains(ctx, awsKey) || strings.Contains(ctx, "aws-setup") {
		t.Fatalf("context after start:\n%s", ctx)
	}
}
