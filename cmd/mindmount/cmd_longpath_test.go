package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mindmount/mindmount/consolidate/llmtest"
)

// longRepoPath is a new folder name whose absolute path is n bytes long,
// made of nested folders below the test's temporary folder.
func longRepoPath(t *testing.T, n int) string {
	t.Helper()
	d := t.TempDir()
	for len(d) < n-61 {
		d = filepath.Join(d, strings.Repeat("d", 60))
	}
	d = filepath.Join(d, strings.Repeat("m", n-len(d)-1))
	if len(d) != n {
		t.Fatalf("%d bytes, want %d: %s", len(d), n, d)
	}
	return d
}

// TestLongRepositoryPathReachesTheDaemon: a repository whose absolute path
// is 200 bytes long (its control socket's path far past the 107 bytes a
// socket address holds), mounted and watched, still gets a daemon that
// "mindmount sync", "consolidate" and "review approve" reach: each is done
// by the daemon, not refused and not done beside it.
func TestLongRepositoryPathReachesTheDaemon(t *testing.T) {
	requireGitCLI(t)
	for _, mode := range []string{"watch", "mount"} {
		t.Run(mode, func(t *testing.T) {
			if mode == "mount" {
				requireFUSE(t)
			}
			srv := llmtest.New(t)
			repo := longRepoPath(t, 200)
			runCmd(t, "init", repo)
			os.MkdirAll(filepath.Join(repo, ".git", "mindmount"), 0o700)
			if err := os.WriteFile(filepath.Join(repo, ".git", "mindmount", "config"), []byte("merge: review\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			bare := filepath.Join(t.TempDir(), "remote.git")
			gitOut(t, filepath.Dir(bare), "init", "-q", "--bare", "-b", "main", bare)
			runCmd(t, "remote", "set", repo, bare)
			args := []string{mode, repo, "--debounce", "50ms", "--idle", "1h"}
			ready := "mindmount: watching " + repo
			if mode == "mount" {
				mnt := t.TempDir()
				args = []string{mode, repo, mnt, "--debounce", "50ms", "--idle", "1h"}
				ready = "mindmount: mounted " + repo + " at " + mnt
			}
			cmd, logs := startMindmount(t, fakeModelEnv(srv), ready, args...)
			defer stopMindmount(t, cmd, logs)
			// No model for the commands themselves: only the daemon's.
			t.Setenv("MINDMOUNT_LLM", "openai")
			t.Setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")

			// The sync service registers its verb a moment after the
			// readiness line; the socket waits for it.
			if out := runCmd(t, "sync", repo); !strings.Contains(out, "Synced by the running daemon.") {
				t.Fatalf("sync:\n%s\nlogs:\n%s", out, logs.String())
			}
			if got, want := gitOut(t, bare, "rev-parse", "main"), gitOut(t, repo, "rev-parse", "HEAD"); got != want {
				t.Fatalf("remote at %s, local at %s", got, want)
			}
			writeWatchFile(t, repo, "transcripts/s1.jsonl", `{"role":"user","content":"I speak Italian."}`+"\n")
			srv.Queue(llmtest.KindExtract, llmtest.Reply{Content: llmtest.JSON(map[string]any{"facts": []map[string]any{{"kind": "user", "slug": "speaks-italian", "description": "You speak Italian.", "fact": "You speak Italian."}}})})
			srv.Queue(llmtest.KindDecide, llmtest.Reply{Content: `{"decisions":[{"fact":0,"action":"ADD","target":"","description":"","text":""}]}`})
			if out := runCmd(t, "consolidate", repo); !strings.Contains(out, "Consolidated by the daemon serving") || !strings.Contains(out, "waits for review") {
				t.Fatalf("consolidate:\n%s\nlogs:\n%s", out, logs.String())
			}
			tip := gitOut(t, repo, "rev-parse", "mindmount/dream/1")
			if out := runCmd(t, "review", "approve", "1", "--tip", tip, repo); !strings.Contains(out, "merged mindmount/dream/1 as ") {
				t.Fatalf("review approve:\n%s\nlogs:\n%s", out, logs.String())
			}
			waitFor(t, func() bool { return strings.Contains(logs.String(), "dream merged") }, "the daemon's log of its merge")
		})
	}
}
