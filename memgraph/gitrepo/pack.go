package gitrepo

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
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
// It runs beside commits without taking the commit lock, and is safe
// there: it only adds packs and then deletes loose objects and packs whose
// every object is in a new pack (prune-packed); nothing unreachable is
// pruned, so the objects of a commit in flight survive whether they were
// packed or not; a reader that misses an object that moved into a new pack
// reopens the storage (see readObject). A cancelled ctx stops git with
// SIGTERM, on which git removes its own temporary files.
//
// Why git and not go-git: go-git's RepackObjects rewrites every object into
// one pack on every call and deletes loose objects without git's care;
// git's repack is the tool every git user already trusts and its deltas
// bring the size within a small factor of "git gc --aggressive" (see
// scripts/bench-pack.sh).
func (r *Repo) Pack(ctx context.Context) error {
	git, err := exec.LookPath("git")
	if err != nil {
		return ErrNoGit
	}
	out, err := r.runGit(ctx, git, "repack", "-d", "-q", "--geometric=2")
	if err != nil && ctx.Err() == nil && strings.Contains(out, "geometric") {
		// git before 2.33: a plain incremental repack.
		out, err = r.runGit(ctx, git, "repack", "-d", "-q")
	}
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("git repack: %v: %s", err, firstLineOf([]byte(out)))
	}
	return nil
}

func (r *Repo) runGit(ctx context.Context, git string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, git, append([]string{"-C", r.dir}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_TERMINAL_PROMPT=0")
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 30 * time.Second
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func firstLineOf(b []byte) string {
	for i, c := range b {
		if c == '\n' {
			return string(b[:i])
		}
	}
	return string(b)
}
