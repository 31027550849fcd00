package tracker

import (
	"bytes"
	"fmt"

	"github.com/mindmount/mindmount/memgraph"
	"github.com/mindmount/mindmount/memgraph/secret"
)

// SecretProblems reports the secrets data would add to git over prev (the
// committed version, nil when new), one problem per finding: file, line and
// rule, never the value. A file with such problems is kept out of git like
// an invalid one, unless Config.CommitSecrets says otherwise. Binary files
// (a NUL byte) and files over maxSecretScan are not scanned: a commit must
// not wait minutes for regular expressions over an attachment.
func SecretProblems(rel string, data, prev []byte) []memgraph.Problem {
	if len(data) == 0 || len(data) > maxSecretScan || bytes.IndexByte(data, 0) >= 0 {
		return nil
	}
	var out []memgraph.Problem
	for _, f := range secret.Added(string(prev), string(data)) {
		out = append(out, memgraph.Problem{Path: rel, Line: f.Line,
			Msg: fmt.Sprintf("%s (rule %s); the file is not committed until it is removed (or the operator sets commit_secrets)", secretPrefix, f.Rule)})
	}
	return out
}

// secretPrefix opens every secret problem.
const secretPrefix = "secret found"

// maxSecretScan bounds the files scanned for secrets (memories are at most
// 64 KiB; this covers any text a person or agent writes by hand).
const maxSecretScan = 4 << 20

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
