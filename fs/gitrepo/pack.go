package gitrepo

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/mindmount/mindmount/memgraph/atomicfile"
)

// ErrNoGit is returned by Pack when the git CLI is not installed.
var ErrNoGit = errors.New("git is not installed; loose objects are not packed")

// Loose estimates the number of loose objects the way git's "gc --auto"
// does, from the fan-out directory 17 times 256, and counts them exactly
// when that sample is too small to say much (a young repository). It is
// cheap enough to ask after every commit.
func (r *Repo) Loose() int {
	if n := r.looseIn("17"); n >= 8 {
		return n * 256
	}
	n := 0
	for i := 0; i < 256; i++ {
		n += r.looseIn(fmt.Sprintf("%02x", i))
	}
	return n
}

func (r *Repo) looseIn(fan string) int {
	ents, err := os.ReadDir(filepath.Join(r.objDir, fan))
	if err != nil {
		return 0
	}
	n := 0
	for _, e := range ents {
		if len(e.Name()) == 38 {
			n++
		}
	}
	return n
}

// Pack packs the repository's loose objects in the background with git's
// own tool, "git repack -d --geometric=2": the loose objects go into a new
// pack, and packs are merged so that each is at least twice the size of
// the next smaller one — a handful of packs whatever the history, and the
// cost of a repack follows the new objects, not the whole history.
//
// Packs made that way compress poorly: a pack's deltas only reach objects
// of the same pack, and a commit in a folder of thousands of memories
// writes a tree of hundreds of kilobytes, so ten thousand commits packed
// a few hundred at a time take four times what "git gc --aggressive"
// makes of them. So once the packs have grown to twice what the last deep
// repack left (deepDue), Pack also recomputes every delta
// ("git repack -A -d -f", a wide window): the size stays within 2x of
// gc --aggressive, and since deep repacks come at doublings, their total
// cost is a small multiple of the last one's. Both run on one thread at a
// lower priority, beside the daemon.
//
// It runs beside commits without taking the commit lock, and is safe
// there: it only adds packs and then deletes loose objects and packs whose
// every object is in a new pack (prune-packed); nothing unreachable is
// pruned (a deep repack's "-A" turns what it leaves out into loose
// objects instead of deleting them, and nothing here runs git prune), so
// the objects of a commit in flight survive whether they were packed or
// not; a reader that misses an object that moved into a new pack reopens
// the storage (see readObject). A cancelled ctx stops git with SIGTERM, on
// which git removes its own temporary files.
//
// Packs of different repositories take turns (packSlots): one daemon
// serving many users never runs more repacks at once than half the CPUs.
//
// Why git and not go-git: go-git's RepackObjects rewrites every object into
// one pack on every call and deletes loose objects without git's care;
// git's repack is the tool every git user already trusts (see
// scripts/bench-pack.sh for the sizes).
//
// Each pack also brings the history index up to HEAD (see History), so a
// path's history never walks more than the commits since the last pack.
func (r *Repo) Pack(ctx context.Context) (err error) {
	git, err := exec.LookPath("git")
	if err != nil {
		return ErrNoGit
	}
	release, err := packSlots.acquire(ctx)
	if err != nil {
		return err
	}
	defer release()
	out, err := r.runGit(ctx, git, "-c", "pack.threads=1", "repack", "-d", "-q", "--geometric=2")
	if err != nil && ctx.Err() == nil && strings.Contains(out, "geometric") {
		// git before 2.33: a plain incremental repack.
		out, err = r.runGit(ctx, git, "-c", "pack.threads=1", "repack", "-d", "-q")
	}
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("git repack: %v: %s", err, firstLineOf([]byte(out)))
	}
	defer func() {
		if err == nil {
			err = r.IndexHistory(ctx)
		}
	}()
	total := r.packedSize()
	if !deepDue(total, r.deepSize()) {
		return nil
	}
	out, err = r.runGit(ctx, git, "-c", "pack.threads=1", "repack", "-A", "-d", "-f", "-q", "--window=50", "--depth=50")
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("git repack -A -f: %v: %s", err, firstLineOf([]byte(out)))
	}
	r.setDeepSize(r.packedSize())
	return nil
}

// packSlots bounds the repacks running at once in this process.
var packSlots = newSlots(max(1, runtime.NumCPU()/2))

// slots is a counting semaphore whose waiters give up with their context.
type slots chan struct{}

func newSlots(n int) slots { return make(slots, n) }

func (s slots) acquire(ctx context.Context) (release func(), err error) {
	select {
	case s <- struct{}{}:
		return func() { <-s }, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// minDeepPack is the packed size under which a deep repack is not worth
// a thought: a young repository compresses well enough either way.
const minDeepPack = 1 << 20

// deepDue says whether packs of total bytes, where the last deep repack
// left deep bytes, are worth repacking from scratch: at every doubling,
// so the sizes stay within a factor of the best and the work done over a
// repository's life is a small multiple of its last repack.
func deepDue(total, deep int64) bool {
	if total < minDeepPack {
		return false
	}
	return deep <= 0 || total >= 2*deep
}

// packedSize is the size of the repository's packs in bytes.
func (r *Repo) packedSize() int64 {
	ents, err := os.ReadDir(filepath.Join(r.objDir, "pack"))
	if err != nil {
		return 0
	}
	var n int64
	for _, e := range ents {
		if !strings.HasSuffix(e.Name(), ".pack") {
			continue
		}
		if fi, err := e.Info(); err == nil {
			n += fi.Size()
		}
	}
	return n
}

// deepFile records the packed size the last deep repack left, in git's
// directory where nothing of it is pushed or committed.
func (r *Repo) deepFile() string { return filepath.Join(r.gitDir, "mindmount-deep-pack") }

func (r *Repo) deepSize() int64 {
	b, err := os.ReadFile(r.deepFile())
	if err != nil {
		return 0
	}
	n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		return 0 // unreadable: the next pack repacks deeply and rewrites it
	}
	return n
}

// setDeepSize is best effort: a lost record costs one early deep repack.
func (r *Repo) setDeepSize(n int64) {
	atomicfile.WriteFile(r.deepFile(), []byte(strconv.FormatInt(n, 10)+"\n"), 0o644)
}

func (r *Repo) runGit(ctx context.Context, git string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, git, append([]string{"-C", r.dir}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_TERMINAL_PROMPT=0")
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 30 * time.Second
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		return "", err
	}
	// Packing is background work: the daemon's requests come first.
	_ = syscall.Setpriority(syscall.PRIO_PROCESS, cmd.Process.Pid, 10)
	err := cmd.Wait()
	return out.String(), err
}

func firstLineOf(b []byte) string {
	for i, c := range b {
		if c == '\n' {
			return string(b[:i])
		}
	}
	return string(b)
}
