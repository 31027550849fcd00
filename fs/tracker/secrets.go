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
// weighs (secret.Scan: binary files through their printable runs, large
// ones in overlapping chunks); a file that cannot be scanned is refused
// like one that holds a secret. A file with such problems is kept out of
// git like an invalid one, unless the operator sets commit_secrets. The
// tracker, the pre-commit hook and mindmount check all judge with it.
func SecretProblems(rel string, data, prev []byte) []memgraph.Problem {
	path := secret.SafeName(rel)
	found, err := secret.ScanAdded(prev, data)
	if err != nil {
		return []memgraph.Problem{{Path: path, Msg: "the file cannot be scanned for secrets, so it is not committed"}}
	}
	var out []memgraph.Problem
	for _, f := range found {
		out = append(out, memgraph.Problem{Path: path, Line: f.Line,
			Msg: fmt.Sprintf("%s (rule %s); the file is not committed until it is removed (or the operator sets commit_secrets)", secretPrefix, f.Rule), Err: ErrSecret})
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
