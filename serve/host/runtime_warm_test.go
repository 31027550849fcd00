package host

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// Start returns once what a first request would otherwise build is built:
// the recall index (OpenRepo starts it in the background, Scan does not
// build it) and the work tree's size count.
func TestStartWarmsRecall(t *testing.T) {
	dir := newUser(t, t.TempDir(), "ada")
	for i := 0; i < 300; i++ {
		body := fmt.Sprintf("---\ndescription: Fact %d about coffee\n---\n# Fact %d\n\n## Fact\nThe user said fact %d.\n", i, i, i)
		if err := os.WriteFile(filepath.Join(dir, "user_memory", fmt.Sprintf("fact-%d.md", i)), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{{"add", "-A"}, {"commit", "-qm", "facts"}} {
		if out, err := exec.Command("git", append([]string{"-c", "safe.directory=" + dir, "-C", dir}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	rt, err := OpenRuntime(dir, RuntimeConfig{})
	if err != nil {
		t.Fatal(err)
	}
	if err := rt.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer rt.Close(context.Background())
	if !rt.Graph.RecallBuilt() {
		t.Fatal("Start returned before the recall index was built: the first recall would build it")
	}
	if n := rt.Graph.RecallIndex().Len(); n < 300 {
		t.Fatalf("recall index holds %d memories, want at least 300", n)
	}
}
