package webui

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mindmount/mindmount/fs/gitrepo"
)

// History is read with the git CLI (log, show, cat-file): read-only
// commands that take no lock and move no ref. Writes go through the
// tracker (ui_actions.go).

// commit is one commit as the pages show it.
type commit struct {
	Hash, Short string
	Parents     []string
	Author      string
	When        time.Time
	Subject     string
	Body        string // the message after the subject, trailers removed
	Trailers    []trailer
	Counts      []count // a consolidation's "1 added, 2 updated"
	Diff        []diffLine
}

type trailer struct{ Key, Value string }

type count struct {
	N    int
	What string
}

// diffLine is one line of a commit's diff: shown byte for byte
// (verbatim), the change as it is.
type diffLine struct {
	Class string
	Text  verbatim
}

// Consolidation reports whether the consolidator made the commit.
func (c commit) Consolidation() bool {
	for _, t := range c.Trailers {
		if t.Key == "Mindmount-Model" || t.Key == "Mindmount-Transcript" {
			return true
		}
	}
	return strings.HasPrefix(c.Subject, "consolidate ")
}

// Merge reports whether the commit has more than one parent (a dream's or
// a sync's merge).
func (c commit) Merge() bool { return len(c.Parents) > 1 }

// ErrNoCommit means a revision does not name a commit of the repository.
var ErrNoCommit = errors.New("no such commit")

// git runs git in dir and returns its standard output.
func git(ctx context.Context, dir string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, "git", append([]string{"-C", dir, "-c", "core.quotepath=off", "--no-optional-locks"}, args...)...)
	// Paths are file names, never patterns: a memory named "*.md" is one file.
	cmd.Env = append(cmd.Environ(), "GIT_LITERAL_PATHSPECS=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return out, fmt.Errorf("git %s: %w: %s", args[0], err, firstLine(stderr.String()))
	}
	return out, nil
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}

// logFormat starts each commit with a NUL and separates its fields by NUL;
// git refuses NUL in commit messages, so no message can forge a record.
const logFormat = "--format=%x00%H%x00%P%x00%an%x00%at%x00%B%x00"

// logQuery selects commits for readLog.
type logQuery struct {
	Path  string // only commits touching this path ("" = all)
	Limit int
	Patch bool // with each commit's diff (of Path when set)
}

// readLogWithin is readLog bounded by budget: what git found by then, and
// cut true when it was still looking. A memory's history walks every
// commit of the repository (git cannot tell which commits touch a file
// without comparing their trees) unless the history index answers
// (pathHistory); the budget keeps the page usable until then.
func readLogWithin(ctx context.Context, dir string, q logQuery, budget time.Duration) ([]commit, bool, error) {
	ctx, cancel := context.WithTimeout(ctx, budget)
	defer cancel()
	cs, err := readLog(ctx, dir, q)
	if err == nil || ctx.Err() == nil {
		return cs, false, err
	}
	// Killed at the deadline: the last record may be half written.
	if len(cs) > 0 {
		cs = cs[:len(cs)-1]
	}
	return cs, true, nil
}

// pathHistory is a memory's history as readLog with Path and Patch finds
// it, from the repository's history index (gitrepo History): git shows
// the commits the index names instead of walking the whole history for
// them. Until the index reaches HEAD (a first build runs in the
// background), git log looks within budget; cut says it stopped looking.
func pathHistory(ctx context.Context, repo *gitrepo.Repo, path string, limit int, budget time.Duration) (cs []commit, cut bool, err error) {
	hashes, err := repo.History(ctx, path, limit)
	if err != nil {
		return readLogWithin(ctx, repo.Dir(), logQuery{Path: path, Limit: limit, Patch: true}, budget)
	}
	if len(hashes) == 0 {
		return nil, false, nil
	}
	args := append([]string{"log", logFormat, "-p", "--no-color", "--no-ext-diff", "-m", "--first-parent", "--no-walk=unsorted"}, hashes...)
	out, err := git(ctx, repo.Dir(), append(args, "--", path)...)
	if err != nil {
		return nil, false, err
	}
	return parseLog(out), false, nil
}

// readLog reads commits newest first.
func readLog(ctx context.Context, dir string, q logQuery) ([]commit, error) {
	args := []string{"log", logFormat, "-n", strconv.Itoa(q.Limit)}
	if q.Patch {
		args = append(args, "-p", "--no-color", "--no-ext-diff", "-m", "--first-parent")
	}
	args = append(args, "HEAD", "--")
	if q.Path != "" {
		args = append(args, q.Path)
	}
	out, err := git(ctx, dir, args...)
	if err != nil {
		if ctx.Err() != nil {
			return parseLog(out), err
		}
		if isEmptyRepo(ctx, dir) {
			return nil, nil
		}
		return nil, err
	}
	return parseLog(out), nil
}

func isEmptyRepo(ctx context.Context, dir string) bool {
	_, err := git(ctx, dir, "rev-parse", "--verify", "-q", "HEAD")
	return err != nil
}

// parseLog parses logFormat output (with or without patches).
func parseLog(out []byte) []commit {
	parts := strings.Split(string(out), "\x00")
	var cs []commit
	// parts[0] is "" (before the first record's NUL); then six per commit:
	// hash, parents, author, time, message, and what follows (the patch).
	for i := 1; i+4 < len(parts); i += 6 {
		c := commit{Hash: parts[i], Author: parts[i+2]}
		c.Short = shortHash(c.Hash)
		c.Parents = strings.Fields(parts[i+1])
		if sec, err := strconv.ParseInt(parts[i+3], 10, 64); err == nil {
			c.When = time.Unix(sec, 0)
		}
		c.Subject, c.Body, c.Trailers = splitMessage(parts[i+4])
		c.Counts = parseCounts(c.Subject)
		if i+5 < len(parts) {
			c.Diff = parseDiff(parts[i+5])
		}
		cs = append(cs, c)
	}
	return cs
}

func shortHash(h string) string {
	if len(h) > 8 {
		return h[:8]
	}
	return h
}

var trailerRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^([A-Za-z][A-Za-z0-9-]*): (.*)$`) })

// splitMessage splits a commit message into subject, body and the
// trailers of its last paragraph.
func splitMessage(msg string) (subject, body string, trailers []trailer) {
	msg = strings.TrimRight(msg, "\n")
	subject, body, _ = strings.Cut(msg, "\n")
	body = strings.Trim(body, "\n")
	paras := strings.Split(body, "\n\n")
	last := paras[len(paras)-1]
	var ts []trailer
	for _, l := range strings.Split(last, "\n") {
		m := trailerRE().FindStringSubmatch(l)
		if m == nil {
			return subject, body, nil
		}
		ts = append(ts, trailer{m[1], m[2]})
	}
	if len(ts) == 0 {
		return subject, body, nil
	}
	return subject, strings.Join(paras[:len(paras)-1], "\n\n"), ts
}

var countRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(\d+) (added|updated|contradicted|unchanged|skipped)`)
})

// parseCounts reads a consolidation subject's counts.
func parseCounts(subject string) []count {
	if !strings.HasPrefix(subject, "consolidate ") {
		return nil
	}
	var cs []count
	for _, m := range countRE().FindAllStringSubmatch(subject, -1) {
		n, _ := strconv.Atoi(m[1])
		cs = append(cs, count{n, m[2]})
	}
	return cs
}

// maxDiffLines bounds one commit's diff on a page.
const maxDiffLines = 400

// parseDiff classifies the lines of a patch for colouring.
func parseDiff(p string) []diffLine {
	p = strings.Trim(p, "\n")
	if p == "" {
		return nil
	}
	lines := strings.Split(p, "\n")
	out := make([]diffLine, 0, min(len(lines), maxDiffLines+1))
	for i, l := range lines {
		if i == maxDiffLines {
			out = append(out, diffLine{"meta", verbatim(fmt.Sprintf("… %d more lines (git show)", len(lines)-i))})
			break
		}
		cls := "ctx"
		switch {
		case strings.HasPrefix(l, "diff --git"), strings.HasPrefix(l, "index "), strings.HasPrefix(l, "+++"), strings.HasPrefix(l, "---"),
			strings.HasPrefix(l, "new file"), strings.HasPrefix(l, "deleted file"), strings.HasPrefix(l, "similarity"), strings.HasPrefix(l, "rename "):
			cls = "meta"
		case strings.HasPrefix(l, "@@"):
			cls = "hunk"
		case strings.HasPrefix(l, "+"):
			cls = "add"
		case strings.HasPrefix(l, "-"):
			cls = "del"
		}
		out = append(out, diffLine{cls, verbatim(l)})
	}
	return out
}

var hashRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[0-9a-f]{40}([0-9a-f]{24})?$`) })

// resolveCommit checks that h is a full commit hash of the repository.
func resolveCommit(ctx context.Context, dir, h string) (commit, error) {
	if !hashRE().MatchString(h) {
		return commit{}, fmt.Errorf("%w: %q is not a full commit hash", ErrNoCommit, h)
	}
	out, err := git(ctx, dir, "log", logFormat, "-n", "1", "--no-walk", h, "--")
	cs := parseLog(out)
	if err != nil || len(cs) != 1 || cs[0].Hash != h {
		return commit{}, fmt.Errorf("%w: %s", ErrNoCommit, shortHash(h))
	}
	return cs[0], nil
}

// changedPaths lists the files that differ between two commits.
func changedPaths(ctx context.Context, dir, from, to string) ([]string, error) {
	out, err := git(ctx, dir, "diff-tree", "-r", "-z", "--no-renames", "--name-only", from, to, "--")
	if err != nil {
		return nil, err
	}
	var ps []string
	for _, p := range strings.Split(string(out), "\x00") {
		if p != "" {
			ps = append(ps, p)
		}
	}
	return ps, nil
}

// blobAt reads path at commit rev; ok is false when it has no such file.
func blobAt(ctx context.Context, dir, rev, path string) (data []byte, ok bool, err error) {
	out, err := git(ctx, dir, "ls-tree", "-z", rev, "--", path)
	if err != nil {
		return nil, false, err
	}
	// "<mode> blob <hash>\t<path>\x00"; nothing when rev has no such file.
	meta, name, found := strings.Cut(strings.TrimSuffix(string(out), "\x00"), "\t")
	f := strings.Fields(meta)
	if !found || name != path || len(f) != 3 || f[1] != "blob" {
		return nil, false, nil
	}
	data, err = git(ctx, dir, "cat-file", "blob", f[2])
	if err != nil {
		return nil, false, err
	}
	return data, true, nil
}
