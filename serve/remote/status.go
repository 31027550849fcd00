package remote

import (
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/mindmount/mindmount/fs/gitrepo"
	"github.com/mindmount/mindmount/memgraph"
	"github.com/mindmount/mindmount/memgraph/atomicfile"
)

// stateFile holds the sync state in the git directory: local, never
// committed.
const stateFile = "mindmount/sync.json"

// State is the sync state of one repository.
type State struct {
	Remote  string `json:"remote,omitempty"`  // the URL, never with credentials
	Account string `json:"account,omitempty"` // the GitHub login, after SetupGitHub
	// RepoName and Configured are the GitHub repository's name and when
	// SetupGitHub connected it (the reference's repo_name, configured_at).
	RepoName   string    `json:"repo_name,omitempty"`
	Configured time.Time `json:"configured_at,omitzero"`
	LastPush   time.Time `json:"last_push,omitzero"`
	LastFetch  time.Time `json:"last_fetch,omitzero"` // last successful fetch (and merge)
	LastSync   time.Time `json:"last_sync,omitzero"`  // last attempt
	Failure    string    `json:"failure,omitempty"`   // the last attempt's error, "" after a success
	FailedAt   time.Time `json:"failed_at,omitzero"`
	Failures   int       `json:"failures,omitempty"` // consecutive failures (the backoff)
	Ahead      int       `json:"ahead"`              // local commits the remote lacks
	Behind     int       `json:"behind"`             // remote commits not merged yet
	// OldestUnpushed is when the oldest commit the remote lacks was made
	// (zero when none): a cluster's replication lag.
	OldestUnpushed time.Time `json:"oldest_unpushed,omitzero"`
	Siblings       []string  `json:"siblings,omitempty"` // retired siblings of the last merge
	// Alone is set by a caller that synced without a daemon: nothing
	// retries a failure then, so Text does not say it will.
	Alone bool `json:"-"`
}

// ReadState reads the sync state of the repository at dir (zero when it
// never synced), with ahead/behind computed now.
func ReadState(r *gitrepo.Repo) State {
	var st State
	if b, err := os.ReadFile(filepath.Join(r.GitDir(), filepath.FromSlash(stateFile))); err == nil {
		json.Unmarshal(b, &st)
	}
	if u, err := URL(r.Dir()); err == nil {
		st.Remote = displayURL(u)
	} else {
		st.Remote = ""
	}
	st.Ahead, st.Behind = aheadBehind(r)
	st.OldestUnpushed = time.Time{}
	if st.Ahead > 0 {
		st.OldestUnpushed = oldestAhead(r, st.Ahead)
	}
	return st
}

// oldestAhead is the earliest commit time among the n commits on HEAD's
// first-parent line (the ones the remote lacks, when HEAD is ahead).
func oldestAhead(r *gitrepo.Repo, n int) time.Time {
	repo, err := open(r.Dir())
	if err != nil {
		return time.Time{}
	}
	head, err := repo.Head()
	if err != nil {
		return time.Time{}
	}
	var oldest time.Time
	h := head.Hash()
	for i := 0; i < min(n, 1000); i++ {
		c, err := repo.CommitObject(h)
		if err != nil {
			break
		}
		if oldest.IsZero() || c.Committer.When.Before(oldest) {
			oldest = c.Committer.When
		}
		if len(c.ParentHashes) == 0 {
			break
		}
		h = c.ParentHashes[0]
	}
	return oldest
}

func writeState(r *gitrepo.Repo, st State) {
	p := filepath.Join(r.GitDir(), filepath.FromSlash(stateFile))
	b, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return
	}
	if os.MkdirAll(filepath.Dir(p), 0o755) != nil {
		return
	}
	atomicfile.WriteFile(p, append(b, '\n'), 0o600)
}

// record stores the outcome of one attempt. err was scrubbed of the token.
func (s *Syncer) record(res Result, err error, fetched bool) {
	st := ReadState(s.r)
	now := time.Now()
	st.LastSync = now
	if err != nil {
		st.Failure = memgraph.ErrorLine(err.Error())
		st.FailedAt = now
		st.Failures++
		s.log.Warn("sync failed; will retry", "remote", st.Remote, "err", st.Failure, "failures", st.Failures)
	} else {
		st.Failure, st.Failures = "", 0
		if fetched {
			st.LastFetch = now
		}
		if res.Pushed {
			st.LastPush = now
		}
		if res.Merged != "" {
			st.Siblings = res.Siblings
		}
		if res.Merged != "" || res.Pushed {
			s.log.Info("synced", "remote", st.Remote, "result", res.String())
		}
	}
	st.Ahead, st.Behind = aheadBehind(s.r)
	st.OldestUnpushed = time.Time{} // computed when read
	writeState(s.r, st)
}

// Text renders the state for .mindmount/status and "mindmount status"; "" when
// no remote is configured.
func (st State) Text() string {
	if st.Remote == "" {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Sync: %s\n", st.Remote)
	fmt.Fprintf(&b, "  %d ahead, %d behind; last push %s, last fetch %s\n", st.Ahead, st.Behind, when(st.LastPush), when(st.LastFetch))
	switch {
	case st.Failure != "" && st.Alone:
		fmt.Fprintf(&b, "  last failure %s (%d in a row; no daemon serves this repository, so nothing retries until you sync again): %s\n", when(st.FailedAt), st.Failures, st.Failure)
	case st.Failure != "":
		fmt.Fprintf(&b, "  last failure %s (%d in a row, retrying with backoff): %s\n", when(st.FailedAt), st.Failures, st.Failure)
	}
	if len(st.Siblings) > 0 {
		fmt.Fprintf(&b, "  last merge kept both versions: %s\n", strings.Join(st.Siblings, ", "))
	}
	return b.String()
}

// StatusText is the sync part of "mindmount status" for the repository r.
func StatusText(r *gitrepo.Repo) string { return ReadState(r).Text() }

func when(t time.Time) string {
	if t.IsZero() {
		return "never"
	}
	return t.Local().Format("2006-01-02 15:04:05")
}

// displayURL drops any user information from a URL before it is shown.
func displayURL(raw string) string {
	if u, err := url.Parse(raw); err == nil && u.User != nil && u.Scheme != "" {
		u.User = nil
		return u.String()
	}
	return raw
}

// maxCount bounds the ahead/behind walks.
const maxCount = 10000

// aheadBehind counts the commits HEAD has that the remote-tracking branch
// has not, and the other way round.
func aheadBehind(r *gitrepo.Repo) (ahead, behind int) {
	repo, err := open(r.Dir())
	if err != nil {
		return 0, 0
	}
	head, err := repo.Head()
	if err != nil {
		return 0, 0
	}
	ref, err := repo.Storer.Reference(remoteRef(head.Name().Short()))
	if err != nil {
		return len(reach(repo, head.Hash())), 0
	}
	// The usual cases are cheap: one side is an ancestor of the other.
	if n, ok := walkUntil(repo, head.Hash(), ref.Hash()); ok {
		return n, 0
	}
	if n, ok := walkUntil(repo, ref.Hash(), head.Hash()); ok {
		return 0, n
	}
	a := reach(repo, head.Hash())
	b := reach(repo, ref.Hash())
	for h := range a {
		if !b[h] {
			ahead++
		}
	}
	for h := range b {
		if !a[h] {
			behind++
		}
	}
	return ahead, behind
}

// walkUntil counts the commits reachable from h before stop (following
// first parents only, at most 1000) and reports whether it reached stop.
func walkUntil(repo *git.Repository, h, stop plumbing.Hash) (int, bool) {
	for n := 0; n < 1000; n++ {
		if h == stop {
			return n, true
		}
		c, err := repo.CommitObject(h)
		if err != nil || len(c.ParentHashes) == 0 {
			return 0, false
		}
		h = c.ParentHashes[0]
	}
	return 0, false
}

// reach returns the commits reachable from h (at most maxCount).
func reach(repo *git.Repository, h plumbing.Hash) map[plumbing.Hash]bool {
	seen := map[plumbing.Hash]bool{}
	queue := []plumbing.Hash{h}
	for len(queue) > 0 && len(seen) < maxCount {
		id := queue[0]
		queue = queue[1:]
		if seen[id] {
			continue
		}
		c, err := repo.CommitObject(id)
		if err != nil {
			continue
		}
		seen[id] = true
		queue = append(queue, c.ParentHashes...)
	}
	return seen
}
