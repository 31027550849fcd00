package remote

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/transport"
	githttp "github.com/go-git/go-git/v5/plumbing/transport/http"
	"github.com/mindmount/mindmount/fs/gitrepo"
	"github.com/mindmount/mindmount/fs/tracker"
)

// Author signs sync's merge commits (the "remote" writer).
var Author = gitrepo.Writer("remote")

// Options tunes a Syncer. The zero value is usable.
type Options struct {
	// Credentials supply the token (FromEnv for the CLI).
	Credentials Credentials
	// Writer records the merge: the repository's tracker in a daemon.
	// nil is tracker.Alone, for a repository no tracker serves here.
	Writer tracker.Writer
	// Logger receives one line per sync outcome; nil is slog.Default().
	Logger *slog.Logger
}

// Syncer syncs one repository with its remote. Safe for concurrent use:
// syncs are serialized.
type Syncer struct {
	r    *gitrepo.Repo
	opts Options
	log  *slog.Logger

	mu sync.Mutex // one sync at a time

	kickOnce sync.Once
	kick     chan struct{}   // Kick -> Serve
	reqs     chan chan error // Answer -> Serve: a sync asked for, and where its outcome goes
}

// New returns a Syncer for r.
func New(r *gitrepo.Repo, opts Options) *Syncer {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Writer == nil {
		opts.Writer = tracker.Alone{Repo: r}
	}
	return &Syncer{r: r, opts: opts, log: opts.Logger, reqs: make(chan chan error)}
}

// Result is what one sync did.
type Result struct {
	Fetched  bool     // the remote had commits we did not
	Merged   string   // the merge (or fast-forward) commit, "" when none
	Pushed   bool     // our commits were pushed
	Siblings []string // retired siblings the merge created
}

func (res Result) String() string {
	var parts []string
	if res.Merged != "" {
		parts = append(parts, "merged "+gitrepo.ShortHash(res.Merged))
	}
	if len(res.Siblings) > 0 {
		parts = append(parts, "kept both versions of "+fmt.Sprint(len(res.Siblings))+" changed on both sides: "+strings.Join(res.Siblings, ", "))
	}
	if res.Pushed {
		parts = append(parts, "pushed")
	}
	if len(parts) == 0 {
		return "up to date"
	}
	return strings.Join(parts, "; ")
}

// Sync fetches, merges what the remote has, and pushes what we have, once.
// The outcome is recorded in the sync state (Status).
func (s *Syncer) Sync(ctx context.Context) (Result, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	res, err := s.sync(ctx, true)
	s.record(res, err, true)
	return res, err
}

// Push pushes without fetching first unless the remote refuses (a
// non-fast-forward), then syncs fully.
func (s *Syncer) Push(ctx context.Context) (Result, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	res, err := s.sync(ctx, false)
	s.record(res, err, false)
	return res, err
}

func (s *Syncer) sync(ctx context.Context, fetch bool) (res Result, err error) {
	url, err := URL(s.r.Dir())
	if err != nil {
		return res, err
	}
	token, err := s.opts.Credentials.Lookup(url)
	if err != nil {
		return res, err
	}
	defer func() { err = scrub(err, token) }()
	repo, err := open(s.r.Dir())
	if err != nil {
		return res, err
	}
	auth := authFor(url, token)
	branch, err := s.branch()
	if err != nil {
		return res, err
	}
	if fetch {
		if res, err = s.fetchMerge(ctx, repo, auth, branch); err != nil {
			return res, err
		}
	}
	pushed, err := s.push(ctx, repo, auth, branch)
	// The remote moved since: bring it in, then push again. Members of
	// a team push to one branch at once, so the remote may move again
	// between the fetch and the push: a few rounds, each merging what
	// came, before the loop's backoff treats it as a failure.
	for round := 0; round < pushRounds && (errors.Is(err, git.ErrNonFastForwardUpdate) || isRejected(err)); round++ {
		if res, err = s.fetchMerge(ctx, repo, auth, branch); err != nil {
			return res, err
		}
		pushed, err = s.push(ctx, repo, auth, branch)
	}
	res.Pushed = pushed
	return res, err
}

// pushRounds bounds the fetch-merge-push rounds after a refused push.
const pushRounds = 5

// branch is the current branch's short name (main).
func (s *Syncer) branch() (string, error) {
	repo, err := open(s.r.Dir())
	if err != nil {
		return "", err
	}
	ref, err := repo.Storer.Reference(plumbing.HEAD)
	if err != nil {
		return "", err
	}
	if ref.Type() != plumbing.SymbolicReference {
		return "", errors.New("HEAD is detached; check out a branch to sync")
	}
	return ref.Target().Short(), nil
}

func remoteRef(branch string) plumbing.ReferenceName {
	return plumbing.NewRemoteReferenceName(Name, branch)
}

// fetchMerge fetches the remote branch and merges it in.
func (s *Syncer) fetchMerge(ctx context.Context, repo *git.Repository, auth transport.AuthMethod, branch string) (Result, error) {
	var res Result
	spec := config.RefSpec("+refs/heads/" + branch + ":" + string(remoteRef(branch)))
	fctx, cancel, refused := fetchContext(ctx, repo)
	err := repo.FetchContext(fctx, &git.FetchOptions{RemoteName: Name, RefSpecs: []config.RefSpec{spec}, Auth: auth})
	cancel()
	if rerr := refused(); rerr != nil {
		err = rerr // the refusal, not the cancellation it caused
	}
	switch {
	case errors.Is(err, transport.ErrEmptyRemoteRepository):
		return res, nil // a new remote: the push fills it
	case errors.Is(err, git.NoMatchingRefSpecError{}):
		return res, nil // the remote has no such branch yet
	case err != nil && !errors.Is(err, git.NoErrAlreadyUpToDate):
		return res, fmt.Errorf("fetch: %w", err)
	}
	ref, err := repo.Storer.Reference(remoteRef(branch))
	if errors.Is(err, plumbing.ErrReferenceNotFound) {
		return res, nil
	}
	if err != nil {
		return res, err
	}
	theirs := ref.Hash()
	for attempt := 0; attempt < 3; attempt++ {
		head, err := s.r.Head()
		if err != nil {
			return res, err
		}
		merged, sibs, err := s.merge(ctx, repo, plumbing.NewHash(head), theirs)
		if errors.Is(err, gitrepo.ErrRefMoved) {
			continue // a local commit landed meanwhile: plan again
		}
		if err != nil {
			return res, err
		}
		res.Fetched = merged != ""
		res.Merged, res.Siblings = merged, sibs
		return res, nil
	}
	return res, errors.New("merge: the branch kept moving; will retry")
}

// merge plans the merge of theirs into ours and hands it to the writer as
// one change with the parents it was computed on: when HEAD moved
// meanwhile the writer refuses it (gitrepo.ErrRefMoved) and fetchMerge
// plans again.
func (s *Syncer) merge(ctx context.Context, repo *git.Repository, ours, theirs plumbing.Hash) (string, []string, error) {
	p, err := planMerge(repo, ours, theirs)
	if err != nil || p.upToDate {
		return "", nil, err
	}
	p.commit.Author = Author
	p.commit.When = time.Now()
	if p.commit.Message == "" {
		p.commit.Message = "sync: fast-forward to " + Name
	}
	merged, err := s.opts.Writer.Apply(ctx, p.commit)
	return merged, p.siblings, err
}

// push pushes the branch; false when the remote already had it.
func (s *Syncer) push(ctx context.Context, repo *git.Repository, auth transport.AuthMethod, branch string) (bool, error) {
	h, err := s.r.Head()
	if err != nil || h == "" {
		return false, err
	}
	spec := config.RefSpec("refs/heads/" + branch + ":refs/heads/" + branch)
	err = repo.PushContext(ctx, &git.PushOptions{RemoteName: Name, RefSpecs: []config.RefSpec{spec}, Auth: auth})
	if errors.Is(err, git.NoErrAlreadyUpToDate) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("push: %w", err)
	}
	// Keep the remote-tracking ref in step, so ahead/behind is right
	// without another fetch.
	repo.Storer.SetReference(plumbing.NewHashReference(remoteRef(branch), plumbing.NewHash(h)))
	return true, nil
}

func isRejected(err error) bool {
	return err != nil && (strings.Contains(err.Error(), "non-fast-forward") || strings.Contains(err.Error(), "rejected"))
}

// authFor hands the token to go-git in memory, for http(s) remotes only.
// GitHub and most hosts accept any user name with a token as password.
func authFor(url, token string) transport.AuthMethod {
	if token == "" || !(strings.HasPrefix(url, "https://") || strings.HasPrefix(url, "http://")) {
		return nil
	}
	return &githttp.BasicAuth{Username: "x-access-token", Password: token}
}
