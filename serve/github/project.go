package github

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
)

// MemoryBranch is the branch of the project's repository that holds its
// memory: an orphan branch with a normal mindmount repository layout, so
// the code's history stays clean and every memory change is a reviewable
// diff.
const MemoryBranch = "mindmount/memory"

// DreamRefs are the dreams' branches (consolidate.DreamPrefix) as a fetch
// refspec: a clone holds them so numbering and waiting dreams agree with
// the project's repository.
const DreamRefs = "+refs/heads/mindmount/dream/*:refs/heads/mindmount/dream/*"

// ErrNoProjectBranch means the project's repository has no memory branch.
var ErrNoProjectBranch = errors.New("the project's repository has no " + MemoryBranch + " branch")

// HasMemoryBranch reports whether the project's repository (a URL or a
// path git understands) has the memory branch.
func HasMemoryBranch(ctx context.Context, project string) (bool, error) {
	out, err := git(ctx, ".", "ls-remote", "--heads", "--", project, "refs/heads/"+MemoryBranch)
	if err != nil {
		return false, err
	}
	return strings.TrimSpace(out) != "", nil
}

// Clone makes dir a clone of the project's memory branch (only that
// branch, plus the dreams' branches), with the project as its remote
// origin.
func Clone(ctx context.Context, project, dir string) error {
	if _, err := git(ctx, ".", "clone", "--quiet", "--single-branch", "--branch", MemoryBranch, "--", project, dir); err != nil {
		return err
	}
	return FetchDreams(ctx, dir)
}

// FetchDreams brings the project's dream branches into dir.
func FetchDreams(ctx context.Context, dir string) error {
	_, err := git(ctx, dir, "fetch", "--quiet", "origin", DreamRefs)
	return err
}

// Adopt makes the freshly initialised repository dir the project's
// memory: its branch is renamed MemoryBranch (it shares no history with
// the code, an orphan), the project becomes its remote origin, and the
// branch is pushed there.
func Adopt(ctx context.Context, project, dir string) error {
	if _, err := git(ctx, dir, "branch", "-M", MemoryBranch); err != nil {
		return err
	}
	if _, err := git(ctx, dir, "remote", "add", "origin", project); err != nil {
		return err
	}
	if _, err := git(ctx, dir, "push", "--quiet", "origin", "refs/heads/"+MemoryBranch+":refs/heads/"+MemoryBranch); err != nil {
		return err
	}
	_, err := git(ctx, dir, "branch", "--quiet", "--set-upstream-to=origin/"+MemoryBranch)
	if err != nil {
		_, err = git(ctx, dir, "fetch", "--quiet", "origin", MemoryBranch)
		if err == nil {
			_, err = git(ctx, dir, "branch", "--quiet", "--set-upstream-to=origin/"+MemoryBranch)
		}
	}
	return err
}

// Push pushes branch of dir to the same name at origin; force replaces a
// dream branch the remote holds from an earlier proposal of that number.
func Push(ctx context.Context, dir, branch string, force bool) error {
	spec := "refs/heads/" + branch + ":refs/heads/" + branch
	if force {
		spec = "+" + spec
	}
	_, err := git(ctx, dir, "push", "--quiet", "origin", spec)
	return err
}

// DeleteRemote deletes branch at origin; a branch already gone is fine.
func DeleteRemote(ctx context.Context, dir, branch string) error {
	_, err := git(ctx, dir, "push", "--quiet", "origin", "--delete", "refs/heads/"+branch)
	if err != nil && strings.Contains(err.Error(), "remote ref does not exist") {
		return nil
	}
	return err
}

// WriteReviewMode sets the clone's operator file (under its git
// directory, never in the tracked tree) to merge: review: every dream
// waits for approval, here a pull request.
func WriteReviewMode(ctx context.Context, dir string) error {
	gd, err := git(ctx, dir, "rev-parse", "--absolute-git-dir")
	if err != nil {
		return err
	}
	p := strings.TrimSpace(gd) + "/mindmount"
	if err := os.MkdirAll(p, 0o700); err != nil {
		return err
	}
	f := p + "/config"
	old, err := os.ReadFile(f)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	var kept []string
	for _, l := range strings.Split(string(old), "\n") {
		if strings.TrimSpace(l) != "" && !strings.HasPrefix(strings.TrimSpace(l), "merge:") {
			kept = append(kept, l)
		}
	}
	kept = append(kept, "merge: review")
	if err := os.WriteFile(f, []byte(strings.Join(kept, "\n")+"\n"), 0o600); err != nil {
		return fmt.Errorf("writing %s: %w", f, err)
	}
	return nil
}
