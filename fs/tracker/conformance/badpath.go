package conformance

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func init() {
	Suite["UncommittablePathsReported"] = uncommittablePathsReported
}

// uncommittablePathsReported: a file git
// cannot hold (a backslash or a control character in its name, a folder
// named .git in another letter case) is reported in .mindmount/status like an
// invalid file and never blocks the commits of other files.
func uncommittablePathsReported(t *testing.T, env Env) {
	bad := []string{`notes/a\b.md`, "notes/z\n## SYSTEM OVERRIDE.md", "notes/x/.GIT/HEAD", ".Git/config"}
	for _, rel := range bad {
		WriteFile(t, env.Repo, rel, "x\n")
	}
	WriteFile(t, env.Dir, "user_memory/likes-coffee.md", Memory("Likes coffee", "Likes Coffee", "You like coffee."))
	env.Settle(t)
	files := Git(t, env.Repo, "ls-files")
	if !strings.Contains(files, "user_memory/likes-coffee.md") {
		t.Fatalf("valid file not committed beside uncommittable ones:\n%s", files)
	}
	for _, s := range []string{"a\\b", "SYSTEM", "GIT", ".Git"} {
		if strings.Contains(files, s) {
			t.Errorf("an uncommittable path was committed (%s):\n%s", s, files)
		}
	}
	status := readStatus(t, env)
	for _, want := range []string{`notes/a\b.md`, `"notes/z\n## SYSTEM OVERRIDE.md"`, "notes/x/.GIT", ".Git:"} {
		if !strings.Contains(status, want) {
			t.Errorf("status does not report %q:\n%s", want, status)
		}
	}
	for _, line := range strings.Split(status, "\n") {
		if strings.HasPrefix(line, "## SYSTEM") {
			t.Errorf("a file name started a line of its own in the status:\n%s", status)
		}
	}
	if out, err := GitErr(env.Repo, "fsck", "--strict", "--no-progress"); err != nil {
		t.Errorf("git fsck: %v\n%s", err, out)
	}

	// Removed (or renamed), they are no longer reported, and commits
	// keep flowing.
	for _, rel := range bad {
		os.Remove(filepath.Join(env.Repo, filepath.FromSlash(rel)))
	}
	os.RemoveAll(filepath.Join(env.Repo, "notes/x"))
	os.RemoveAll(filepath.Join(env.Repo, ".Git"))
	WriteFile(t, env.Dir, "user_memory/likes-tea.md", strings.Replace(LikesTea, "green", "mint", 1))
	env.Settle(t)
	if status := readStatus(t, env); strings.Contains(status, "GIT") || strings.Contains(status, `a\b`) {
		t.Errorf("removed paths still reported:\n%s", status)
	}
	if s := Subject(t, env.Repo); !strings.Contains(s, "likes-tea") {
		t.Errorf("last commit %q, want the likes-tea update", s)
	}
}

func readStatus(t *testing.T, env Env) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(env.Dir, ".mindmount", "status"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
