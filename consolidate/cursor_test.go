package consolidate

import (
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/mindmount/mindmount/fs/gitrepo"
)

func revertGit(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir,
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@x", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@x")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// TestRevertOfLatestConsolidationStaysConsumed: "git revert" of the newest
// consolidation puts the old cursor file back without asking the merge
// driver; the cursor floor keeps its messages consumed, whether or not the
// cursor was read between the consolidation and the revert.
func TestRevertOfLatestConsolidationStaysConsumed(t *testing.T) {
	for _, readBefore := range []bool{false, true} {
		dir := t.TempDir()
		r, err := gitrepo.Init(dir)
		if err != nil {
			t.Fatal(err)
		}
		const rel = "transcripts/s1.jsonl"
		data := []byte(`{"role":"user","content":"I love tea"}` + "\n" + `{"role":"assistant","content":"noted"}` + "\n")
		who := gitrepo.Author{Name: "t", Email: "t@x"}
		if _, err := r.Apply([]gitrepo.Change{{Path: rel, Data: data}}, "transcript", who, time.Now()); err != nil {
			t.Fatal(err)
		}
		tr := ParseTranscript(rel, data)
		cur, _ := ParseCursor(nil)
		cur.Advance(tr, len(tr.Messages))
		// The consolidation: a memory and the cursor advance in one commit.
		if _, err := r.Apply([]gitrepo.Change{
			{Path: "user_memory/likes-tea.md", Data: []byte("---\ndescription: tea\n---\n# Tea\n")},
			{Path: CursorFile, Data: cur.Render()},
		}, "consolidate", Author, time.Now()); err != nil {
			t.Fatal(err)
		}
		if readBefore {
			head, _, _ := r.ReadHead(CursorFile)
			if _, err := loadCursor(r, head); err != nil {
				t.Fatal(err)
			}
		}
		revertGit(t, dir, "revert", "--no-edit", "HEAD")
		head, ok, err := r.ReadHead(CursorFile)
		if err != nil || ok {
			t.Fatalf("revert left the cursor in HEAD (ok=%v err=%v)", ok, err)
		}
		c, err := loadCursor(r, head)
		if err != nil {
			t.Fatal(err)
		}
		if start, rewritten := c.Start(tr); start != len(tr.Messages) || rewritten {
			t.Fatalf("readBefore=%v: start %d rewritten %v: the reverted messages would be consolidated again", readBefore, start, rewritten)
		}
		// A rewritten transcript is still consolidated again from the start.
		other := ParseTranscript(rel, []byte(`{"role":"user","content":"I love coffee"}`+"\n"))
		if start, rewritten := c.Start(other); start != 0 || !rewritten {
			t.Fatalf("rewritten transcript: start %d rewritten %v", start, rewritten)
		}
	}
}
