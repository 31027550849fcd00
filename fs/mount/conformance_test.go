package mount

import (
	"runtime/debug"
	"sort"
	"testing"
	"time"

	"github.com/mindmount/mindmount/fs/tracker/conformance"
)

// TestConformance runs the behaviours every way of exposing a repository
// must show (the same table runs against watch mode) against the mount.
func TestConformance(t *testing.T) {
	requireFUSE(t)
	// Some entries exec tools with the mount as working directory. A vfork
	// child's chdir into a mount this process serves, during a GC
	// stop-the-world, deadlocks the runtime; without GC there is no
	// stop-the-world to wait for. The suite allocates little.
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	names := make([]string, 0, len(conformance.Suite))
	for name := range conformance.Suite {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			tm := mountRepoDebounce(t, conformance.NewRepo(t), Options{}, 300*time.Millisecond)
			conformance.Suite[name](t, conformance.Env{
				Dir:    tm.mnt,
				Repo:   tm.dir,
				Settle: func(t *testing.T) { tm.settle() },
			})
		})
	}
}
