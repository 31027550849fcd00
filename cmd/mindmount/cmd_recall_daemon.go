package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/mindmount/mindmount/fs/gitrepo"
	"github.com/mindmount/mindmount/memgraph"
	"github.com/mindmount/mindmount/memgraph/recall"
	"github.com/mindmount/mindmount/serve/control"
	"github.com/mindmount/mindmount/serve/host"
)

// A daemon serving the repository (mount, watch, serve's worker) holds
// its memories indexed already: "mindmount recall" asks it over the
// control socket (where the kernel's word on the peer's uid decides, as
// for every control verb) instead of reading, parsing and indexing every
// memory again. The daemon ranks its own repository's memories only: the
// request names a question, never a repository or a path.

// daemonRecallWait bounds the wait for a daemon's answer: a daemon too
// busy to rank in that time is not waited for, recall runs in-process.
const daemonRecallWait = 5 * time.Second

// recallThroughDaemon asks the daemon serving dir for question's hits.
// ok is false when no daemon answers it (none runs, it is older than
// this command, it refuses this user, it is stopping): the command then
// recalls in-process. err is the daemon's own error (an unknown scope).
func recallThroughDaemon(ctx context.Context, dir string, question control.Question) (res control.RecallResult, ok bool, err error) {
	gitDir, err := recallGitDir(dir)
	if err != nil {
		return res, false, nil
	}
	ctx, cancel := context.WithTimeout(ctx, daemonRecallWait)
	defer cancel()
	a, err := control.Ask(ctx, gitDir, control.Request{Verb: control.Recall, Question: &question})
	switch {
	case err == nil:
	case errors.Is(err, control.ErrNoDaemon), errors.Is(err, control.ErrNotServed),
		errors.Is(err, control.ErrRefused), errors.Is(err, control.ErrStopping),
		errors.Is(err, context.DeadlineExceeded):
		slog.Debug("recall: in-process", "why", err)
		return res, false, nil
	default:
		return res, false, err
	}
	if err := json.Unmarshal(a.Data, &res); err != nil {
		return res, false, fmt.Errorf("the daemon's answer: %w", err)
	}
	return res, true, nil
}

// recallGitDir is dir's git directory: dir/.git when it is a folder, as
// it is but in a linked worktree, found without opening the repository.
func recallGitDir(dir string) (string, error) {
	p := filepath.Join(dir, ".git")
	if fi, err := os.Stat(p); err == nil && fi.IsDir() {
		return p, nil
	}
	r, err := gitrepo.Open(dir)
	if err != nil {
		return "", err
	}
	return r.GitDir(), nil
}

// answerRecall is a daemon's answer to "mindmount recall": its own
// graph's ranking. A repository with teams the daemon did not attach
// (watch mode) is left to the command, which attaches them itself.
func answerRecall(ctx context.Context, rt *host.Runtime, req control.Request) (control.Answer, error) {
	q := req.Question
	if q == nil {
		return control.Answer{}, fmt.Errorf("recall: no question in the request")
	}
	if q.Scope != memgraph.ScopePersonal && len(rt.Graph.Scopes()) == 0 {
		if teams, err := teamsOf(rt.Dir); err != nil || len(teams) > 0 {
			return control.Answer{}, fmt.Errorf("%w: recall across teams this daemon did not attach", control.ErrNotServed)
		}
	}
	hits, err := rt.Graph.RecallScoped(ctx, q.Q, recall.Options{K: q.K, Kind: q.Kind, All: q.All, Literal: q.Literal}, q.Scope)
	if err != nil {
		return control.Answer{}, err
	}
	data, err := json.Marshal(control.RecallResult{Hits: hits, Scoped: len(rt.Graph.Scopes()) > 0})
	return control.Answer{Data: data}, err
}
