package tracker

import (
	"errors"
	"os"
	"strings"

	"github.com/mindmount/mindmount/memgraph/subtree"

	"github.com/mindmount/mindmount/fs/gitrepo"
	"github.com/mindmount/mindmount/memgraph"
)

// uncommittable applies gitrepo.CheckPath, the one path rule, to a path the
// tracker heard of. For a path inside a folder named .git in another
// letter case (".GIT/", "x/.Git/") the report is keyed by that folder, so a
// nested clone is one report and not one per object file; otherwise by the
// path itself.
func uncommittable(rel string) (error, string) {
	err := gitrepo.CheckPath(rel)
	if err == nil {
		return nil, ""
	}
	parts := strings.Split(rel, "/")
	for i, p := range parts {
		if strings.EqualFold(p, ".git") {
			key := strings.Join(parts[:i+1], "/")
			return gitrepo.CheckPath(key), key
		}
	}
	return err, rel
}

// judgeUncommittable records key as not committable while something is
// there, and forgets it once it is gone (renamed or removed).
func (t *Tracker) judgeUncommittable(key, id string, bad error, res *result) {
	if _, err := t.r.Tree().Lstat(key); errors.Is(err, os.ErrNotExist) || errors.Is(err, subtree.ErrUnsafePath) {
		t.clearInvalid(key, res)
		return
	}
	msg := strings.TrimPrefix(bad.Error(), gitrepo.ErrBadPath.Error()+": ")
	msg = "not committed: " + msg + "; rename it"
	// quote keeps a name with a newline on one line of the status file
	// and the log.
	t.setInvalid(key, id, fingerprint([]byte(key)), []memgraph.Problem{{Path: quote(key), Msg: msg, Err: ErrBadName}}, res)
}
