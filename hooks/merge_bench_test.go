package hooks

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// BenchmarkRevertMerge: the web page's revert of a 400-line file changed
// since in other lines, merged in process (MergeFile) against its
// natural baseline, what the revert did before: "git merge-file -p" in a
// child process over three temporary files.
func BenchmarkRevertMerge(b *testing.B) {
	var base strings.Builder
	for i := range 400 {
		fmt.Fprintf(&base, "line %d of the notes\n", i)
	}
	bs := base.String()
	ours := strings.Replace(bs, "line 10 of", "line ten of", 1)
	theirs := strings.Replace(bs, "line 390 of", "line three-ninety of", 1)
	b.Run("in-process", func(b *testing.B) {
		for b.Loop() {
			if _, err := MergeFile(MergeInput{Path: "notes/plan.txt", Base: []byte(bs), Ours: []byte(ours), Theirs: []byte(theirs)}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("git-merge-file", func(b *testing.B) {
		dir := b.TempDir()
		for b.Loop() {
			for name, s := range map[string]string{"current": ours, "base": bs, "other": theirs} {
				if err := os.WriteFile(filepath.Join(dir, name), []byte(s), 0o600); err != nil {
					b.Fatal(err)
				}
			}
			cmd := exec.Command("git", "merge-file", "-p", "-q", "current", "base", "other")
			cmd.Dir = dir
			if _, err := cmd.Output(); err != nil {
				b.Fatal(err)
			}
		}
	})
}
