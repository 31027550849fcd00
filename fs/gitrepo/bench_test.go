package gitrepo

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// benchFiles is the size of the benchmark repository.
const benchFiles = 10000

// benchRepo builds a repository shaped like a large mindmount repository:
// 7,000 user memories, 2,000 character memories and 1,000 external notes
// in 20 folders, all committed, with a clean work tree.
func benchRepo(b *testing.B) (*Repo, string) {
	b.Helper()
	requireGit(b)
	dir := b.TempDir()
	r, err := Init(dir)
	if err != nil {
		b.Fatal(err)
	}
	changes := make([]Change, 0, benchFiles)
	for i := 0; i < benchFiles; i++ {
		var p string
		switch {
		case i < 7000:
			p = fmt.Sprintf("user_memory/memory-%05d.md", i)
		case i < 9000:
			p = fmt.Sprintf("character_memory/adapt-%05d.md", i)
		default:
			p = fmt.Sprintf("notes/topic-%02d/note-%05d.md", i%20, i)
		}
		data := []byte(fmt.Sprintf("---\ndescription: memory %d\n---\n# Memory %d\n\n## Fact\nFact number %d.\n", i, i, i))
		abs := filepath.Join(dir, filepath.FromSlash(p))
		os.MkdirAll(filepath.Dir(abs), 0o755)
		if err := os.WriteFile(abs, data, 0o644); err != nil {
			b.Fatal(err)
		}
		changes = append(changes, Change{Path: p, Data: data})
	}
	if _, err := r.Commit(changes, "seed", who, when); err != nil {
		b.Fatal(err)
	}
	return r, dir
}

// BenchmarkCommitOneFile measures committing one changed file in a
// 10,000-file repository: through Commit, through Apply (which also writes
// and fsyncs the file) and, for comparison, with the git CLI
// ("git add FILE && git commit"). scripts/bench-commit.sh prints the ratio.
func BenchmarkCommitOneFile(b *testing.B) {
	const rel = "user_memory/memory-04242.md"
	b.Run("mindmount-Commit", func(b *testing.B) {
		r, dir := benchRepo(b)
		abs := filepath.Join(dir, rel)
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			data := []byte(fmt.Sprintf("---\ndescription: changed\n---\n# Memory\n\n## Fact\nVersion %d.\n", i))
			if err := os.WriteFile(abs, data, 0o644); err != nil {
				b.Fatal(err)
			}
			if h, err := r.Commit([]Change{{Path: rel, Data: data}}, "update "+rel, who, when.Add(time.Duration(i)*time.Second)); err != nil || h == "" {
				b.Fatalf("commit: %q %v", h, err)
			}
		}
		b.StopTimer()
		checkCleanB(b, dir)
	})
	b.Run("mindmount-Apply", func(b *testing.B) {
		r, dir := benchRepo(b)
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			data := []byte(fmt.Sprintf("---\ndescription: changed\n---\n# Memory\n\n## Fact\nVersion %d.\n", i))
			if h, err := r.Apply([]Change{{Path: rel, Data: data}}, "update "+rel, who, when.Add(time.Duration(i)*time.Second)); err != nil || h == "" {
				b.Fatalf("apply: %q %v", h, err)
			}
		}
		b.StopTimer()
		checkCleanB(b, dir)
	})
	b.Run("git-cli", func(b *testing.B) {
		_, dir := benchRepo(b)
		abs := filepath.Join(dir, rel)
		env := append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir,
			"GIT_AUTHOR_NAME=cli", "GIT_AUTHOR_EMAIL=cli@x", "GIT_COMMITTER_NAME=cli", "GIT_COMMITTER_EMAIL=cli@x")
		// One untimed round lets git build its cache-tree, as it would
		// have in a repository it has been working in.
		gitCmd(b, dir, "add", rel)
		gitCmd(b, dir, "status", "--porcelain")
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			data := []byte(fmt.Sprintf("---\ndescription: changed\n---\n# Memory\n\n## Fact\nVersion %d.\n", i))
			if err := os.WriteFile(abs, data, 0o644); err != nil {
				b.Fatal(err)
			}
			cmd := exec.Command("sh", "-c", "git add "+rel+" && git commit -q -m msg")
			cmd.Dir, cmd.Env = dir, env
			if out, err := cmd.CombinedOutput(); err != nil {
				b.Fatalf("git: %v\n%s", err, out)
			}
		}
		b.StopTimer()
		checkCleanB(b, dir)
	})
}

func checkCleanB(b *testing.B, dir string) {
	b.Helper()
	if st := gitCmd(b, dir, "status", "--porcelain"); st != "" {
		b.Fatalf("git status not clean:\n%s", st)
	}
}

// BenchmarkDirtyStale measures the start-up scan of a 10,000-file
// repository whose files were touched after their commit (a chown, a
// copy): the first scan hashes every file and stores fresh stat data in
// .git/index, the next one trusts it. It prints the ratio.
func BenchmarkDirtyStale(b *testing.B) {
	r, dir := benchRepo(b)
	unlock, err := r.LockDaemon()
	if err != nil {
		b.Fatal(err)
	}
	defer unlock()
	past := time.Now().Add(-time.Hour)
	var first, next time.Duration
	for b.Loop() {
		b.StopTimer()
		filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
			if err == nil && d.Type().IsRegular() && !strings.Contains(p, "/.git/") {
				os.Chtimes(p, past, past)
			}
			return nil
		})
		b.StartTimer()
		t0 := time.Now()
		if _, err := r.Dirty(); err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		if _, err := r.Dirty(); err != nil {
			b.Fatal(err)
		}
		first += t1.Sub(t0)
		next += time.Since(t1)
	}
	b.Logf("10,000 files with stale stat data: first scan %v (hashes, stores), next scan %v: next/first %.2f",
		first/time.Duration(b.N), next/time.Duration(b.N), float64(next)/float64(first))
}

// BenchmarkLockAlone measures what each tracker.Alone commit adds: taking
// and dropping the daemon lock (open, flock, close). Compare it with
// BenchmarkCommitOneFile/mindmount-Commit, the commit it guards.
func BenchmarkLockAlone(b *testing.B) {
	r, err := Init(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		unlock, err := r.LockAlone()
		if err != nil {
			b.Fatal(err)
		}
		unlock()
	}
}
