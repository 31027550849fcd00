package mount

import (
	"os/exec"
	"testing"
	"time"
)

// TestOneWriteOnePath: `echo x >> MNT/user_memory/a.md` reaches git
// through one path: one commit, one update of the graph (the mount's read
// of it ahead of the commit and the commit itself are the same update),
// and no HEAD reload when the commit is seen moving HEAD. A read of the
// index between the write and the commit folds the write in once too.
func TestOneWriteOnePath(t *testing.T) {
	for _, readFirst := range []bool{false, true} {
		name := "write"
		if readFirst {
			name = "write then read the index"
		}
		t.Run(name, func(t *testing.T) {
			dir := newRepo(t, map[string]string{"user_memory/a.md": memoryFile("A", "About a", "A fact.")})
			tm := mountRepoDebounce(t, dir, Options{}, 200*time.Millisecond)
			tm.settle()
			before, commits := tm.tr.Counts(), tm.commits()
			if out, err := exec.Command("sh", "-c", "echo x >> "+tm.p("user_memory/a.md")).CombinedOutput(); err != nil {
				t.Fatalf("echo: %v\n%s", err, out)
			}
			if readFirst {
				tm.read("user_memory.md")
			}
			tm.settle()
			// fsnotify's report of the write and of the moved HEAD
			// arrive a moment later: let them, and settle again.
			time.Sleep(300 * time.Millisecond)
			tm.settle()
			after := tm.tr.Counts()
			if got := tm.commits(); got != commits+1 {
				t.Errorf("%d commits for one write, want %d", got-commits, 1)
			}
			if d := after.GraphWrites - before.GraphWrites; d != 1 {
				t.Errorf("graph updated %d times for one write, want 1", d)
			}
			if d := after.HeadReloads - before.HeadReloads; d != 0 {
				t.Errorf("HEAD reloaded %d times after the tracker's own commit, want 0", d)
			}
		})
	}
}
