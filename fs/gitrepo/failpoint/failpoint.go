// Package failpoint names the places in mindmount's write path where a test
// may kill the process, as etcd's gofail does: "objects written", "index
// lock taken", "ref updated" and so on. A test starts the built binary with
// MINDMOUNT_FAILPOINT=name and the process sends itself SIGKILL the moment it
// reaches that point, so recovery is tested against a real crash, not a
// simulated error return.
//
// With the variable unset, Inject is one comparison of a package variable
// against "" and nothing else: failpoints cost nothing in production.
//
// The value is "name" (die the first time name is reached) or "name@N"
// (die the N-th time, counting from 1), so a test can let a few commits
// through first. Several points may be armed at once, separated by commas.
package failpoint

import (
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
)

// EnvVar arms failpoints in a process started with it.
const EnvVar = "MINDMOUNT_FAILPOINT"

// The write path's points. Each is reached just after the step it names
// completed (and before the next one began).
const (
	ObjectsWritten = "objects-written" // blobs, trees and the commit object are loose objects
	IndexLocked    = "index-locked"    // .git/index.lock was created
	RefUpdated     = "ref-updated"     // the branch points at the new commit
	IndexWritten   = "index-written"   // the new index is in index.lock, not yet renamed
	IndexRenamed   = "index-renamed"   // index.lock was renamed over .git/index
	// WorktreeWritten: Apply wrote the work tree files, nothing committed
	// yet. For a consolidation this is also "the cursor is written": the
	// cursor is the last file of its Apply, so one point covers both.
	WorktreeWritten = "worktree-written"
	// The same three steps when a scan stores refreshed stat data in
	// .git/index (no commit): named apart, so a test of a commit's crash
	// is not killed by the scan a daemon makes when it starts.
	RefreshLocked  = "refresh-index-locked"
	RefreshWritten = "refresh-index-written"
	RefreshRenamed = "refresh-index-renamed"
)

var (
	// on is false unless the process was started with EnvVar or a test
	// enabled a point: the fast path of Inject reads nothing else.
	on atomic.Bool

	mu     sync.Mutex
	armed  = os.Getenv(EnvVar) // the spec, under mu
	counts map[string]int
	hooks  map[string]func() // in-process actions set by tests
)

// Inject marks that the caller reached the point name. When name is armed
// the process dies here by SIGKILL (or the test's hook runs instead).
func Inject(name string) {
	if !on.Load() {
		return
	}
	hit(name)
}

func hit(name string) {
	mu.Lock()
	fn, hooked := hooks[name]
	want := 0
	for _, spec := range strings.Split(armed, ",") {
		n, at, _ := strings.Cut(strings.TrimSpace(spec), "@")
		if n != name {
			continue
		}
		want = 1
		if at != "" {
			if v, err := strconv.Atoi(at); err == nil && v > 0 {
				want = v
			}
		}
	}
	if want == 0 {
		mu.Unlock()
		return
	}
	if counts == nil {
		counts = map[string]int{}
	}
	counts[name]++
	fire := counts[name] == want
	mu.Unlock()
	if !fire {
		return
	}
	if hooked {
		fn()
		return
	}
	// SIGKILL cannot be caught: nothing after this line runs, no deferred
	// cleanup, no buffered write reaches the disk — a real crash.
	syscall.Kill(os.Getpid(), syscall.SIGKILL)
	select {} // the signal is delivered before the scheduler returns here
}

// Enable arms name inside this process for a unit test: reaching it calls
// fn instead of killing the process. The returned function disarms it.
// Not safe to use from parallel tests that share a point.
func Enable(name string, fn func()) (disable func()) {
	mu.Lock()
	defer mu.Unlock()
	if hooks == nil {
		hooks = map[string]func(){}
	}
	prevArmed := armed
	hooks[name] = fn
	if armed == "" {
		armed = name
	} else {
		armed += "," + name
	}
	on.Store(true)
	return func() {
		mu.Lock()
		defer mu.Unlock()
		delete(hooks, name)
		delete(counts, name)
		armed = prevArmed
		on.Store(armed != "")
	}
}

func init() { on.Store(armed != "") }
