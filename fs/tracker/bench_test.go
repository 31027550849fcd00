package tracker_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/mindmount/mindmount/fs/tracker"
	"github.com/mindmount/mindmount/fs/tracker/conformance"
)

// bigRepo is a committed repository with n user memories.
func bigRepo(b *testing.B, n int) string {
	b.Helper()
	dir := conformance.NewRepo(b)
	for i := range n {
		s := strconv.Itoa(i)
		p := filepath.Join(dir, "user_memory", "fact-"+s+".md")
		if err := os.WriteFile(p, []byte(conformance.Memory("Fact "+s, "Fact "+s, "Fact "+s+".")), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	conformance.Git(b, dir, "add", "-A")
	conformance.Git(b, dir, "commit", "-q", "-m", "many")
	return dir
}

// BenchmarkCommitOneFile measures the tracker's cost of committing one
// changed memory (read, validate, graph update, commit) in a repository of
// 10,000 memories. Compare with BenchmarkGitCLICommitOneFile.
func BenchmarkCommitOneFile(b *testing.B) {
	dir := bigRepo(b, 10000)
	tr, _, _ := open(b, dir, tracker.Config{})
	rel := "user_memory/fact-5000.md"
	ctx := context.Background()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		conformance.WriteFile(b, dir, rel, conformance.Memory("Fact changed "+strconv.Itoa(i), "Fact", "Changed."))
		tr.Touch(rel, "sed")
		if err := tr.Flush(ctx); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	conformance.CheckRepo(b, dir)
}

// BenchmarkGitCLICommitOneFile is the reference: "git add FILE && git
// commit" with the git CLI on the same repository shape.
func BenchmarkGitCLICommitOneFile(b *testing.B) {
	dir := bigRepo(b, 10000)
	rel := "user_memory/fact-5000.md"
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		conformance.WriteFile(b, dir, rel, conformance.Memory("Fact changed "+strconv.Itoa(i), "Fact", "Changed."))
		cmd := exec.Command("sh", "-c", fmt.Sprintf("git add %s && git -c user.name=b -c user.email=b@x commit -q -m change", rel))
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("%v\n%s", err, out)
		}
	}
}

// BenchmarkTouch is the cost the mount adds to every write-side FUSE
// operation.
func BenchmarkTouch(b *testing.B) {
	dir := conformance.NewRepo(b)
	tr, _, _ := open(b, dir, tracker.Config{})
	paths := make([]string, 1000)
	for i := range paths {
		paths[i] = "user_memory/fact-" + strconv.Itoa(i) + ".md"
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		tr.Touch(paths[i%len(paths)], "sed")
	}
}

// BenchmarkStatus renders .mindmount/status, which the mount serves on read.
func BenchmarkStatus(b *testing.B) {
	dir := conformance.NewRepo(b)
	tr, _, _ := open(b, dir, tracker.Config{})
	for i := range 20 {
		tr.Touch("user_memory/p-"+strconv.Itoa(i)+".md", "sed")
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		_ = tr.Status()
	}
}
