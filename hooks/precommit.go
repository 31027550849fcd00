package hooks

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/mindmount/mindmount/fs/tracker"
	"github.com/mindmount/mindmount/memgraph"
)

// emptyTree is git's well-known empty tree: the "HEAD" of a first commit.
const emptyTree = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"

// ErrRefused is returned by PreCommit when a staged file breaks a rule.
var ErrRefused = errors.New("commit refused by mindmount's pre-commit hook")

// staged is one staged change of a memory file.
type staged struct {
	path             string
	oldMode, newMode string
	oldID, newID     string
	status           byte // A, M, D, T
}

// PreCommit judges the staged files of the repository git runs the hook
// in (the working directory and git's GIT_DIR / GIT_INDEX_FILE) with the
// daemon's gate, tracker.Check, one call per staged path against its HEAD
// version, and writes one "path:line: message" line per problem to out.
// It returns ErrRefused when there is any. The operator's commit_secrets
// in .git/mindmount/config applies as for the daemon.
//
// It reads only what is staged, through two git processes (the staged
// list and the blobs), so its cost follows the files in the commit, not
// the size of the repository.
func PreCommit(ctx context.Context, out io.Writer) error {
	changes, err := stagedFiles(ctx)
	if err != nil {
		return err
	}
	if len(changes) == 0 {
		return nil
	}
	var ids []string
	for _, c := range changes {
		if c.status != 'D' && c.newMode != "120000" {
			ids = append(ids, c.newID)
		}
		if c.status != 'A' {
			ids = append(ids, c.oldID)
		}
	}
	blobs, err := catBlobs(ctx, ids)
	if err != nil {
		return err
	}
	rules := tracker.Rules{Door: tracker.DoorTree, CommitSecrets: operatorCommitsSecrets(ctx)}
	var probs []memgraph.Problem
	for _, c := range changes {
		after := tracker.Version{Exists: c.status != 'D', Link: c.newMode == "120000", Data: blobs[c.newID]}
		before := tracker.Version{Exists: c.status != 'A', Link: c.oldMode == "120000", Data: blobs[c.oldID]}
		if !after.Exists {
			after.Data = nil
		}
		if !before.Exists {
			before.Data = nil
		}
		probs = append(probs, tracker.Check(c.path, after, before, rules)...)
	}
	if len(probs) == 0 {
		return nil
	}
	for _, p := range probs {
		fmt.Fprintln(out, p.String())
	}
	fmt.Fprintln(out, "mindmount: fix the files above (or commit with --no-verify if you mean it)")
	return ErrRefused
}

// operatorCommitsSecrets reads commit_secrets from the operator's file in
// the git directory (memgraph.OperatorFile), as the daemon does; asked
// only when a secret was found, so a clean commit spends no process on it.
func operatorCommitsSecrets(ctx context.Context) bool {
	out, err := exec.CommandContext(ctx, "git", "rev-parse", "--absolute-git-dir").Output()
	if err != nil {
		return false
	}
	src := &memgraph.OperatorSource{Path: filepath.Join(strings.TrimSpace(string(out)), memgraph.OperatorFile)}
	o, _ := src.Get()
	return o.CommitSecrets
}

// stagedFiles lists the staged changes against HEAD.
func stagedFiles(ctx context.Context) ([]staged, error) {
	raw, err := exec.CommandContext(ctx, "git", "diff-index", "--cached", "-z", "--no-renames", "HEAD").Output()
	if err != nil {
		// No HEAD yet (the first commit): everything staged is new. Only
		// then is a second process spent.
		raw, err = exec.CommandContext(ctx, "git", "diff-index", "--cached", "-z", "--no-renames", emptyTree).Output()
	}
	if err != nil {
		return nil, fmt.Errorf("git diff-index: %w", err)
	}
	return parseDiffIndex(raw)
}

// parseDiffIndex reads "git diff-index -z" output. Submodules (gitlinks)
// are left out: their content is another repository's.
func parseDiffIndex(raw []byte) ([]staged, error) {
	var out []staged
	fields := bytes.Split(raw, []byte{0})
	for i := 0; i+1 < len(fields); i += 2 {
		meta, p := string(fields[i]), string(fields[i+1])
		f := strings.Fields(strings.TrimPrefix(meta, ":"))
		if !strings.HasPrefix(meta, ":") || len(f) != 5 || len(f[4]) == 0 || p == "" {
			return nil, fmt.Errorf("git diff-index: unexpected line %q", meta)
		}
		if f[0] == "160000" || f[1] == "160000" {
			continue
		}
		out = append(out, staged{path: p, oldMode: f[0], newMode: f[1], oldID: f[2], newID: f[3], status: f[4][0]})
	}
	return out, nil
}

// catBlobs reads blobs through one "git cat-file --batch".
func catBlobs(ctx context.Context, ids []string) (map[string][]byte, error) {
	out := map[string][]byte{}
	if len(ids) == 0 {
		return out, nil
	}
	cmd := exec.CommandContext(ctx, "git", "cat-file", "--batch")
	cmd.Stdin = strings.NewReader(strings.Join(ids, "\n") + "\n")
	raw, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("git cat-file: %w", err)
	}
	rd := bufio.NewReader(bytes.NewReader(raw))
	for range ids {
		hdr, err := rd.ReadString('\n')
		if err != nil {
			return nil, fmt.Errorf("git cat-file: %w", err)
		}
		f := strings.Fields(hdr)
		if len(f) != 3 {
			continue // "<id> missing"
		}
		n, err := strconv.Atoi(f[2])
		if err != nil || n < 0 {
			return nil, fmt.Errorf("git cat-file: bad header %q", hdr)
		}
		data := make([]byte, n+1) // content and its trailing newline
		if _, err := io.ReadFull(rd, data); err != nil {
			return nil, fmt.Errorf("git cat-file: %w", err)
		}
		out[f[0]] = data[:n]
	}
	return out, nil
}
