package memgraph

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// The operator's switches weaken a guard (commit_secrets lets secrets into
// git), so they never live in the tracked tree, where an agent writing
// through the mount or a commit fetched from a remote could set them. They
// live in a local file only whoever runs the daemon writes:
//
//   - OperatorFile inside the git directory of a single repository
//     (.git/mindmount/config; the mount refuses every path under .git);
//   - ROOT/config for mindmount serve, honoured only when root (or the
//     daemon's own user) owns it and nobody else may write it.
//
// The format is SettingsFile's: "key: value" lines, "#" comments.
const OperatorFile = "mindmount/config" // relative to the git directory

// OperatorKeys are the keys only the operator's file may hold.
var OperatorKeys = []string{"commit_secrets", "merge", "skills", "tree_limit_mib"}

// DefaultTreeLimit is the size limit of a work tree (.git not counted)
// when the operator's file does not set tree_limit_mib: 1 GiB.
const DefaultTreeLimit = 1 << 30

// MergeMode says how a consolidation's dream (its branch) reaches the
// memory: merged at once, or after a person approves it.
type MergeMode string

const (
	MergeAuto   MergeMode = "auto"   // merged at once (the default)
	MergeReview MergeMode = "review" // waits for "mindmount review approve"
)

// Operator is the operator's local configuration. The zero value keeps
// every guard on.
type Operator struct {
	// CommitSecrets commits files in which a secret is found (they are
	// held back by default): "commit_secrets: true".
	CommitSecrets bool
	// Merge is "merge: auto" or "merge: review"; "" when the file does not
	// say (auto). It lives here, not in the tracked tree, so an agent
	// writing memories cannot turn a person's review off.
	Merge MergeMode
	// Skills is "skills: auto" (a skill consolidation learns is active at
	// once) or "skills: review" (it lands as a draft); "" means review.
	// Here for Merge's reason: an agent must not turn the review off.
	Skills MergeMode
	// TreeLimitMiB is "tree_limit_mib: N": the most the work tree (.git
	// not counted) may hold, in MiB; 0 means no limit. TreeLimitSet is
	// false when the file does not say (DefaultTreeLimit). Here because
	// the user whose tree it limits must not raise it.
	TreeLimitMiB int64
	TreeLimitSet bool
}

// TreeLimit is the work tree's size limit in bytes: tree_limit_mib, or
// DefaultTreeLimit when the file does not say; 0 means no limit.
func (o Operator) TreeLimit() int64 {
	if !o.TreeLimitSet {
		return DefaultTreeLimit
	}
	return o.TreeLimitMiB << 20
}

// maxTreeLimitMiB bounds tree_limit_mib so that the limit in bytes fits an
// int64 with room to spare (1 PiB).
const maxTreeLimitMiB = 1 << 30

// isOperatorKey reports whether key belongs to the operator's file.
func isOperatorKey(key string) bool {
	for _, k := range OperatorKeys {
		if k == key {
			return true
		}
	}
	return false
}

// ParseOperator reads an operator file; name is how problems call it.
// Problems name the line and key, never a value.
func ParseOperator(name string, data []byte) (Operator, []Problem) {
	var o Operator
	var probs []Problem
	add := func(line int, format string, args ...any) {
		probs = append(probs, Problem{Path: name, Line: line, Msg: fmt.Sprintf(format, args...)})
	}
	eachKeyValue(data, func(n int, key, val string, ok bool) {
		switch {
		case !ok || !isOperatorKey(key):
			add(n, "want \"key: value\" with a known key (%s)", strings.Join(OperatorKeys, ", "))
		case key == "skills":
			switch m := MergeMode(val); m {
			case MergeAuto, MergeReview:
				o.Skills = m
			default:
				add(n, "skills must be auto or review")
			}
		case key == "tree_limit_mib":
			n64, err := strconv.ParseInt(val, 10, 64)
			if err != nil || n64 < 0 || n64 > maxTreeLimitMiB {
				add(n, "tree_limit_mib must be a whole number of MiB from 0 (no limit) to %d", maxTreeLimitMiB)
				return
			}
			o.TreeLimitMiB, o.TreeLimitSet = n64, true
		case key == "merge":
			switch m := MergeMode(val); m {
			case MergeAuto, MergeReview:
				o.Merge = m
			default:
				add(n, "merge must be auto or review")
			}
		case val == "true":
			o.CommitSecrets = true
		case val == "false":
			o.CommitSecrets = false
		default:
			add(n, "%s must be true or false", key)
		}
	})
	return o, probs
}

// OperatorSource reads one operator file, again whenever it changed (one
// stat per look), so a running daemon follows the operator's edits.
type OperatorSource struct {
	// Path is the file; "" means no file (every guard on).
	Path string
	// Strict honours the file only when root or the daemon's own user
	// owns it and neither its group nor others may write it
	// (mindmount serve's ROOT/config).
	Strict bool
	// RootOnly honours the file only when root owns it: a serve worker,
	// which runs as the user, must not accept a file the user owns.
	RootOnly bool

	mu     sync.Mutex
	loaded bool
	stamp  [4]int64
	o      Operator
	probs  []Problem
}

// Get returns the operator's configuration and the file's problems. A file
// that is missing, unreadable or (Strict) writable by others keeps every
// guard on.
func (s *OperatorSource) Get() (Operator, []Problem) {
	if s == nil || s.Path == "" {
		return Operator{}, nil
	}
	var st syscall.Stat_t
	var stamp [4]int64
	if syscall.Stat(s.Path, &st) == nil {
		stamp = [4]int64{st.Size, st.Mtim.Nano(), int64(st.Ino), int64(st.Mode)<<32 | int64(st.Uid)}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.loaded && stamp == s.stamp {
		return s.o, s.probs
	}
	s.loaded, s.stamp, s.o, s.probs = true, stamp, Operator{}, nil
	if stamp == ([4]int64{}) {
		return s.o, nil
	}
	if s.RootOnly && st.Uid != 0 || s.Strict && (st.Uid != 0 && int(st.Uid) != os.Geteuid() || st.Mode&0o022 != 0) {
		s.probs = []Problem{{Path: s.Path, Msg: "ignored: only root (or the daemon's user) may own and write the operator's configuration (chown root, chmod go-w)"}}
		return s.o, s.probs
	}
	data, err := os.ReadFile(s.Path)
	if err != nil {
		s.probs = []Problem{{Path: s.Path, Msg: "ignored: cannot read it"}}
		return s.o, s.probs
	}
	s.o, s.probs = ParseOperator(s.Path, data)
	return s.o, s.probs
}
