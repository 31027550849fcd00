package mount

import (
	"errors"
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/mindmount/mindmount/memgraph"
	"github.com/mindmount/mindmount/memgraph/team"
)

// TestTeamWithoutTrackerIsReadOnly: a team projected with its graph only
// (a serve member's worker, which is not the team's writer) reads, and
// every mutating call is EROFS whatever the role says; HEAD and the tree
// do not change.
func TestTeamWithoutTrackerIsReadOnly(t *testing.T) {
	requireFUSE(t)
	eng := newRepo(t, map[string]string{"user_memory/eng-fact.md": memoryFile("Eng Fact", "Deploys on Tuesdays", "The team deploys on Tuesdays.")})
	g, err := memgraph.Scan(eng)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(g.Close)
	tm := mountRepo(t, newRepo(t, nil), Options{Teams: []Team{{Name: "eng", Role: team.Write, Graph: g}}})
	head := git(t, eng, "rev-parse", "HEAD")
	f := tm.p("shared/eng/user_memory/eng-fact.md")
	if !strings.Contains(tm.read("shared/eng/user_memory/eng-fact.md"), "Tuesdays") {
		t.Fatal("the team does not read through shared/eng")
	}
	ops := map[string]func() error{
		"write":  func() error { return os.WriteFile(f, []byte("x"), 0o644) },
		"append": func() error { return appendLine(f, "more") },
		// A shell's >> (open with O_CREAT|O_APPEND, then write): the
		// write is EROFS. bash names it; dash's echo says "I/O error"
		// for any failed write, whatever the errno.
		"shell >>": func() error {
			out, err := inDir(tm.mnt, "bash", "-c", "echo x >> shared/eng/user_memory/eng-fact.md").CombinedOutput()
			if err == nil {
				return errors.New("succeeded: " + string(out))
			}
			if !strings.Contains(string(out), "Read-only file system") {
				return errors.New(string(out))
			}
			return syscall.EROFS
		},
		"create":   func() error { return os.WriteFile(tm.p("shared/eng/user_memory/new.md"), []byte("x"), 0o644) },
		"mkdir":    func() error { return os.Mkdir(tm.p("shared/eng/user_memory/sub"), 0o755) },
		"rename":   func() error { return os.Rename(f, tm.p("shared/eng/user_memory/moved.md")) },
		"unlink":   func() error { return os.Remove(f) },
		"truncate": func() error { return os.Truncate(f, 0) },
		"chmod":    func() error { return os.Chmod(f, 0o600) },
	}
	for _, name := range []string{"shell >>", "append", "write", "shell >>", "create", "mkdir", "rename", "unlink", "truncate", "chmod", "shell >>"} {
		err := ops[name]()
		if !errors.Is(err, syscall.EROFS) {
			t.Errorf("%s on a team without its tracker: %v, want EROFS", name, err)
		}
	}
	if got := git(t, eng, "rev-parse", "HEAD"); got != head {
		t.Fatalf("HEAD moved: %s -> %s", head, got)
	}
	if st := git(t, eng, "status", "--porcelain"); st != "" {
		t.Fatalf("the team's tree changed:\n%s", st)
	}
}
