package host

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/mindmount/mindmount/fs/gitrepo"
	"github.com/mindmount/mindmount/fs/tracker"
	"github.com/mindmount/mindmount/memgraph/team"
	"github.com/mindmount/mindmount/serve/control"
	"github.com/mindmount/mindmount/serve/proposal"
)

// The wire between a member's worker and its team's writer: one request
// (a TeamChange) and one answer (teamAnswer) per connection, each a line
// of JSON, over a unix socket serve made (TeamSocket) that only the
// team's group and root may connect to. The writer answers only a peer
// whose SO_PEERCRED uid is a member's (TeamWriter.Do).

// TeamSocketsDir is where serve keeps its teams' sockets, under ROOT.
const TeamSocketsDir = "run"

// TeamSocket is the socket of team name's writer under a serve ROOT.
func TeamSocket(root, name string) string {
	return filepath.Join(root, TeamSocketsDir, "team-"+name+".sock")
}

// maxTeamRequest bounds a request line: a file of the tracker's largest
// size, base64 (4/3) and its JSON around it.
const maxTeamRequest = tracker.MaxFile*4/3 + 64<<10

// teamWait bounds one change, from the request to the answer.
const teamWait = 2 * time.Minute

// teamAnswer is the writer's answer: the result, or an error with the
// names of its kinds (teamKinds).
type teamAnswer struct {
	TeamResult
	Error string   `json:"error,omitempty"`
	Kinds []string `json:"kinds,omitempty"`
}

// teamKinds are the errors an answer carries by name, so the member's
// mount maps them to an errno as if the change were its own.
var teamKinds = map[string]error{
	"read-only":  team.ErrReadOnly,
	"not-member": team.ErrNotMember,
	"git-dir":    tracker.ErrGitDir,
	"synth":      tracker.ErrSynthesized,
	"memory-ro":  tracker.ErrReadOnly,
	"inbox":      tracker.ErrInbox,
	"not-memory": tracker.ErrNotMemory,
	"cursor":     tracker.ErrCursor,
	"bad-name":   tracker.ErrBadName,
	"tree-full":  tracker.ErrTreeFull,
	"secret":     tracker.ErrSecret,
	"unscanned":  tracker.ErrUnscanned,
	"symlink":    tracker.ErrSymlink,
	"too-large":  tracker.ErrTooLarge,
	"invalid":    tracker.ErrInvalid,
	"bad-path":   gitrepo.ErrBadPath,
	"git-busy":   tracker.ErrGitBusy,
	// The review's refusals.
	"not-maintainer": team.ErrNotMaintainer,
	"path-taken":     team.ErrPathTaken,
	"no-proposal":    proposal.ErrNoProposal,
	"moved":          proposal.ErrMoved,
	"conflict":       proposal.ErrConflict,
}

// TeamError is the writer's refusal as the member's worker sees it: its
// message, and its kinds for errors.Is.
type TeamError struct {
	Msg   string
	Kinds []string
}

func (e *TeamError) Error() string { return e.Msg }

// Unwrap returns the errors of e's kinds.
func (e *TeamError) Unwrap() []error {
	var out []error
	for _, k := range e.Kinds {
		if err, ok := teamKinds[k]; ok {
			out = append(out, err)
		}
	}
	return out
}

// ServeTeam answers members' changes on ln with tw until ctx ends; it
// returns once every answer under way is given.
func ServeTeam(ctx context.Context, ln net.Listener, tw *TeamWriter, log *slog.Logger) {
	var wg sync.WaitGroup
	defer wg.Wait()
	stop := context.AfterFunc(ctx, func() { ln.Close() })
	defer stop()
	for {
		c, err := ln.Accept()
		if err != nil {
			if ctx.Err() == nil && !errors.Is(err, net.ErrClosed) {
				log.Warn("team socket stopped", "err", err)
			}
			return
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			answerTeam(ctx, c, tw, log)
		}()
	}
}

// answerTeam serves one connection: who asks is the kernel's word.
func answerTeam(ctx context.Context, c net.Conn, tw *TeamWriter, log *slog.Logger) {
	defer c.Close()
	c.SetDeadline(time.Now().Add(teamWait))
	enc := json.NewEncoder(c)
	uid, ok := PeerUID(c)
	if !ok {
		enc.Encode(teamAnswer{Error: "no peer credentials", Kinds: []string{"not-member"}})
		return
	}
	line, err := bufio.NewReader(io.LimitReader(c, maxTeamRequest)).ReadBytes('\n')
	if err != nil {
		return
	}
	req, err := parseTeamChange(line)
	if err != nil {
		enc.Encode(teamAnswer{Error: err.Error(), Kinds: kindsOf(err)})
		return
	}
	res, err := tw.Do(ctx, uid, req)
	a := teamAnswer{TeamResult: res}
	if err != nil {
		log.Info("team change refused", "uid", uid, "path", req.Path, "err", err)
		a.Error, a.Kinds = err.Error(), kindsOf(err)
	}
	enc.Encode(a)
}

// kindsOf names err's kinds (teamKinds).
func kindsOf(err error) []string {
	var out []string
	for name, k := range teamKinds {
		if errors.Is(err, k) {
			out = append(out, name)
		}
	}
	return out
}

// parseTeamChange reads one request line (checkedChange).
func parseTeamChange(line []byte) (TeamChange, error) {
	var c TeamChange
	if err := json.Unmarshal(line, &c); err != nil {
		return TeamChange{}, fmt.Errorf("not a request: %v", err)
	}
	return checkedChange(c)
}

// checkedChange is c when it is a known change of a path git can hold
// (gitrepo.CheckPath) with a base that is a blob id or none.
func checkedChange(c TeamChange) (TeamChange, error) {
	switch c.Op {
	case TeamList:
		return c, nil
	case TeamApprove, TeamReject:
		if !strings.HasPrefix(c.Branch, proposal.Prefix) || c.Tip == "" {
			return TeamChange{}, fmt.Errorf("%w: %q at %q", proposal.ErrNoProposal, c.Branch, c.Tip)
		}
		return c, nil
	case TeamPut, TeamRemove:
	default:
		return TeamChange{}, fmt.Errorf("unknown change %q", c.Op)
	}
	if err := gitrepo.CheckPath(c.Path); err != nil {
		return TeamChange{}, err
	}
	if c.Base != "" && len(c.Base) != len(gitrepo.BlobID(nil)) {
		return TeamChange{}, fmt.Errorf("base %q is not a blob id", c.Base)
	}
	return c, nil
}

// TeamClient is a member's worker's end of its team's writer.
type TeamClient struct {
	Socket string // TeamSocket
}

// Put hands rel's whole new content, with the blob id it started from
// ("" for a new file), to the team's writer.
func (tc TeamClient) Put(ctx context.Context, rel, base string, data []byte) (TeamResult, error) {
	if data == nil {
		data = []byte{}
	}
	return tc.ask(ctx, TeamChange{Op: TeamPut, Path: rel, Base: base, Data: data})
}

// Review asks the team's writer to list the team's proposals (op
// TeamList), or to approve or reject branch at tip.
func (tc TeamClient) Review(ctx context.Context, op TeamOp, branch, tip string) (TeamResult, error) {
	switch op {
	case TeamList, TeamApprove, TeamReject:
	default:
		return TeamResult{}, fmt.Errorf("unknown review %q", op)
	}
	return tc.ask(ctx, TeamChange{Op: op, Branch: branch, Tip: tip})
}

// Promote hands the team's writer a promoted copy of a member's memory,
// for a path the team does not have yet.
func (tc TeamClient) Promote(ctx context.Context, rel string, data []byte) (TeamResult, error) {
	return tc.ask(ctx, TeamChange{Op: TeamPut, Path: rel, Data: data, Promoted: true})
}

// Propose hands the team's writer rel's new content, from base's version,
// as a proposal whatever the member's role; note says where it came from.
func (tc TeamClient) Propose(ctx context.Context, rel, base string, data []byte, note string) (TeamResult, error) {
	if data == nil {
		data = []byte{}
	}
	return tc.ask(ctx, TeamChange{Op: TeamPut, Path: rel, Base: base, Data: data, Propose: true, Note: note})
}

// Remove asks the team's writer to remove rel, which was base.
func (tc TeamClient) Remove(ctx context.Context, rel, base string) (TeamResult, error) {
	return tc.ask(ctx, TeamChange{Op: TeamRemove, Path: rel, Base: base})
}

func (tc TeamClient) ask(ctx context.Context, req TeamChange) (TeamResult, error) {
	ctx, cancel := context.WithTimeout(ctx, teamWait)
	defer cancel()
	c, err := control.Dial(ctx, tc.Socket) // however long ROOT is
	if err != nil {
		return TeamResult{}, fmt.Errorf("the team's writer: %w", err)
	}
	defer c.Close()
	stop := context.AfterFunc(ctx, func() { c.Close() })
	defer stop()
	if err := json.NewEncoder(c).Encode(req); err != nil {
		return TeamResult{}, fmt.Errorf("the team's writer: %w", err)
	}
	var a teamAnswer
	if err := json.NewDecoder(c).Decode(&a); err != nil {
		return TeamResult{}, fmt.Errorf("the team's writer did not answer: %w", err)
	}
	if a.Error != "" {
		return a.TeamResult, &TeamError{Msg: a.Error, Kinds: a.Kinds}
	}
	return a.TeamResult, nil
}
