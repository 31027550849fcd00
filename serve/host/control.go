package host

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/mindmount/mindmount/consolidate"
	"github.com/mindmount/mindmount/serve/control"
)

// The daemon's control socket (package control): "mindmount consolidate",
// "mindmount review approve|reject N" and "mindmount sync" on a repository
// a daemon serves ask it, the repository's one writer, instead of writing
// beside it. The runtime serves consolidation and review; a service adds
// its own verbs (Handle).

// The errors of consolidation and review this side's handlers return, and
// a team's writer's refusals a worker passes on, travel by name, so the
// command that asked matches them with errors.Is.
func init() {
	control.NameErrors(consolidate.ErrorNames())
	named := make(map[string]error, len(teamKinds))
	for name, err := range teamKinds {
		named["team-"+name] = err
	}
	control.NameErrors(named)
}

// listenControl opens the socket and serves it until ctx ends. A socket
// that cannot be opened (another daemon answers there) is logged: the
// commands then say a daemon runs.
func (rt *Runtime) listenControl(ctx context.Context) {
	ctl, err := control.Listen(rt.Repo.GitDir(), rt.log)
	if err != nil {
		rt.log.Warn("mindmount sync, consolidate and review will not reach this daemon", "err", err)
		return
	}
	rt.control = ctl
	ctl.Handle(control.Consolidate, rt.consolidateNow)
	ctl.Handle(control.Approve, func(ctx context.Context, req control.Request) (control.Answer, error) {
		hash, err := rt.Reviewer().Approve(ctx, req.N, req.Tip)
		return control.Answer{Commit: hash}, err
	})
	ctl.Handle(control.Reject, func(ctx context.Context, req control.Request) (control.Answer, error) {
		hash, err := rt.Reviewer().Reject(ctx, req.N, req.Reason)
		return control.Answer{Commit: hash}, err
	})
	rt.wg.Add(1)
	go func() {
		defer rt.wg.Done()
		ctl.Serve(ctx)
	}()
}

// Handle makes h serve verb v on the daemon's control socket (nothing
// when there is none). Services call it as they start.
func (rt *Runtime) Handle(v control.Verb, h control.Handler) {
	if rt.control != nil {
		rt.control.Handle(v, h)
	}
}

// HandleStream makes h serve the stream verb v on the daemon's control
// socket (nothing when there is none): the doors a running daemon opens
// to "mindmount mcp" and "mindmount ui" started beside it.
func (rt *Runtime) HandleStream(v control.Verb, h control.StreamHandler) {
	if rt.control != nil {
		rt.control.HandleStream(v, h)
	}
}

// consolidateNow runs a consolidation for "mindmount consolidate" and
// answers its report.
func (rt *Runtime) consolidateNow(ctx context.Context, _ control.Request) (control.Answer, error) {
	c := rt.Consolidator
	if c == nil {
		return control.Answer{}, fmt.Errorf("%w: consolidation is off in the daemon serving %s (started with --consolidate=false)", control.ErrNotServed, rt.Dir)
	}
	rep, err := c.RunNow(ctx)
	data, jerr := json.Marshal(rep)
	if jerr != nil && err == nil {
		err = jerr
	}
	return control.Answer{Data: data}, err
}

// ServedUser reports whether dir is a registered user's repository of a
// serve ROOT (ROOT/users/<id>, <id> in ROOT's registry), served now or
// not, and returns ROOT and the ID: such a repository's settings outside
// the tree (its token: remote.CredentialsFor) live under ROOT, whoever
// runs a command on it.
func ServedUser(dir string) (root, id string, ok bool) {
	root, id, ok = userDirOf(dir)
	if !ok {
		return "", "", false
	}
	entries, err := ReadRegistry(root)
	if err != nil {
		return "", "", false
	}
	for _, e := range entries {
		if e.ID == id {
			return root, id, true
		}
	}
	return "", "", false
}

// ServedBy reports whether a mindmount serve serves the repository dir
// (ROOT/users/<id>), with its pid: a live lock on ROOT decides, not the
// repository's control socket. A user's worker stops when idle and its
// socket goes with it (and a user may delete the socket), yet the daemon
// may start the worker at any moment: a command must then not write
// beside it.
func ServedBy(dir string) (pid string, served bool) {
	root, _, ok := userDirOf(dir)
	if !ok {
		return "", false
	}
	running, pid, _ := Running(root)
	return pid, running
}
