package tracker

import (
	"errors"
	"fmt"

	"github.com/mindmount/mindmount/memgraph"
	"github.com/mindmount/mindmount/memgraph/secret"
)

// SecretProblems reports the secrets data would add to git over prev (the
// committed version, nil when new), one problem per finding: file, line and
// rule, never the value. Every byte is read, whatever the file holds or
// weighs (secret.Scan: binary files through their printable runs, every
// file in overlapping chunks in bounded memory, what it encodes — UTF-16,
// gzip, base64 — decoded and scanned too); a file that cannot be scanned,
// or not within the scan's bounds (a gzip bomb), is held back like one
// that holds a secret, with a status line that says so. A file with such problems is kept out of
// git like an invalid one, unless the operator sets commit_secrets. The
// tracker, the pre-commit hook and mindmount check all judge with it.
func SecretProblems(rel string, data, prev []byte) []memgraph.Problem {
	path := secret.SafeName(rel)
	found, err := secret.ScanAdded(prev, data)
	var lim *secret.LimitError
	switch {
	case errors.As(err, &lim):
		return []memgraph.Problem{{Path: path, Msg: fmt.Sprintf("the file cannot be scanned for secrets within mindmount's bounds (%s), so it is not committed", lim.Limit), Err: ErrUnscanned}}
	case err != nil:
		return []memgraph.Problem{{Path: path, Msg: "the file cannot be scanned for secrets, so it is not committed", Err: ErrUnscanned}}
	}
	var out []memgraph.Problem
	for _, f := range found {
		rule := f.Rule
		if f.Via != "" {
			rule += ", inside " + f.Via
		}
		out = append(out, memgraph.Problem{Path: path, Line: f.Line,
			Msg: fmt.Sprintf("%s (rule %s); the file is not committed until it is removed (or the operator sets commit_secrets)", secretPrefix, rule), Err: ErrSecret})
	}
	return out
}

// NameProblems reports a secret in rel's file or folder names (the name
// shown with the secret replaced by a marker): such a path is never
// committed, and the mount refuses to create it.
func NameProblems(rel string) []memgraph.Problem {
	found := secret.InName(rel)
	if len(found) == 0 {
		return nil
	}
	return []memgraph.Problem{{Path: secret.SafeName(rel),
		Msg: fmt.Sprintf("%s in the name (rule %s); it is not committed: rename it", secretPrefix, found[0].Rule), Err: ErrSecret}}
}

// safePath is rel as a log line may show it (secret.SafeName).
func safePath(rel string) string { return secret.SafeName(rel) }

// secretPrefix opens every secret problem.
const secretPrefix = "secret found"

// ErrSecret marks a problem that is a secret found in a file or its name
// (memgraph.Problem.Err): the file is held out of git until it is gone.
var ErrSecret = errors.New(secretPrefix)

// ErrUnscanned marks a problem that is a file the secret scan could not
// read in full (memgraph.Problem.Err): held out of git like a secret.
var ErrUnscanned = errors.New("cannot be scanned for secrets")

// commitSecrets says whether files with secrets are committed anyway:
// Config.CommitSecrets, or "commit_secrets: true" in the operator's
// configuration — never the tracked settings file, which an agent or a
// remote can write.
func (t *Tracker) commitSecrets() bool {
	if t.cfg.CommitSecrets {
		return true
	}
	o, _ := t.cfg.Operator.Get()
	return o.CommitSecrets
}
