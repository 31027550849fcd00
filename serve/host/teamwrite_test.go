package host_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mindmount/mindmount/fs/gitrepo"
	"github.com/mindmount/mindmount/fs/tracker"
	"github.com/mindmount/mindmount/fs/tracker/conformance"
	"github.com/mindmount/mindmount/memgraph/team"
	"github.com/mindmount/mindmount/serve/control"
	"github.com/mindmount/mindmount/serve/host"
)

const tea = "user_memory/likes-tea.md"

// teamWriter is a TeamWriter over a fresh repository whose members are
// uids 1001..1004 (read, propose, write, maintain).
func teamWriter(t *testing.T) (string, *gitrepo.Repo, *host.TeamWriter) {
	t.Helper()
	dir := conformance.NewRepo(t)
	r, err := gitrepo.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	ms := map[uint32]host.TeamMember{
		1001: {User: "rita", Role: team.Read},
		1002: {User: "pete", Role: team.Propose},
		1003: {User: "wendy", Role: team.Write},
		1004: {User: "mary", Role: team.Maintain},
	}
	tw := &host.TeamWriter{Name: "eng", Writer: tracker.Alone{Repo: r}, Repo: r,
		Members: func() (map[uint32]host.TeamMember, error) { return ms, nil }}
	return dir, r, tw
}

// TestTeamWriterRoles: each role × each change: a reader and a stranger
// are refused and HEAD stays; a proposer's change is a branch only; a
// writer's and a maintainer's are commits authored by them with the
// Mindmount-User trailer.
func TestTeamWriterRoles(t *testing.T) {
	for _, tc := range []struct {
		uid     uint32
		user    string
		want    error
		commit  bool
		propose bool
	}{
		{uid: 1001, user: "rita", want: team.ErrReadOnly},
		{uid: 1002, user: "pete", propose: true},
		{uid: 1003, user: "wendy", commit: true},
		{uid: 1004, user: "mary", commit: true},
		{uid: 4242, want: team.ErrNotMember},
		{uid: 0, want: team.ErrNotMember},
	} {
		for _, op := range []host.TeamOp{host.TeamPut, host.TeamRemove} {
			t.Run(tc.user+"/"+string(op), func(t *testing.T) {
				dir, _, tw := teamWriter(t)
				head := conformance.Git(t, dir, "rev-parse", "HEAD")
				old, _ := os.ReadFile(filepath.Join(dir, tea))
				c := host.TeamChange{Op: op, Path: tea, Base: gitrepo.BlobID(old)}
				if op == host.TeamPut {
					c.Data = append(old, "more\n"...)
				}
				res, err := tw.Do(context.Background(), tc.uid, c)
				now := conformance.Git(t, dir, "rev-parse", "HEAD")
				switch {
				case tc.want != nil:
					if !errors.Is(err, tc.want) || now != head {
						t.Fatalf("got %v (HEAD %s -> %s), want %v and HEAD still", err, head, now, tc.want)
					}
				case tc.propose:
					if err != nil || now != head || !strings.HasPrefix(res.Proposal, "mindmount/proposal/"+tc.user+"/") {
						t.Fatalf("proposal: %+v %v, HEAD %s -> %s", res, err, head, now)
					}
				case tc.commit:
					if err != nil || res.Commit != now || now == head {
						t.Fatalf("commit: %+v %v, HEAD %s -> %s", res, err, head, now)
					}
					msg := conformance.Git(t, dir, "log", "-1", "--format=%an%n%B")
					if !strings.HasPrefix(msg, tc.user+"\n") || !strings.Contains(msg, "Mindmount-User: "+tc.user) {
						t.Fatalf("commit message:\n%s", msg)
					}
				}
			})
		}
	}
}

// TestTeamWriterStaleBase: two members append to one memory from the
// same version: both land (the memory merge); a change that rewrites
// the line another change kept becomes a proposal with a conflict note,
// never a silent overwrite.
func TestTeamWriterStaleBase(t *testing.T) {
	dir, r, tw := teamWriter(t)
	old, _ := os.ReadFile(filepath.Join(dir, tea))
	base := gitrepo.BlobID(old)
	fact := strings.Replace(string(old), "in the afternoon.\n", "in the afternoon.\nWENDY-FACT\n", 1)
	episode := strings.Replace(string(old), "in the afternoon.\n", "in the afternoon.\nMARY-EPISODE\n", 1)
	for _, w := range []struct {
		uid  uint32
		data string
	}{{1003, fact}, {1004, episode}} {
		res, err := tw.Do(context.Background(), w.uid, host.TeamChange{Op: host.TeamPut, Path: tea, Base: base, Data: []byte(w.data)})
		if err != nil || res.Commit == "" {
			t.Fatalf("uid %d: %+v %v", w.uid, res, err)
		}
	}
	got, _, _ := r.ReadHead(tea)
	if !strings.Contains(string(got), "WENDY-FACT") || !strings.Contains(string(got), "MARY-EPISODE") {
		t.Fatalf("a change was lost:\n%s", got)
	}
	// A rewrite of the fact's line from the first base conflicts.
	clash := strings.Replace(string(old), "You enjoy green tea", "PETE-FACT: you enjoy black tea", 1)
	res, err := tw.Do(context.Background(), 1003, host.TeamChange{Op: host.TeamPut, Path: tea, Base: base, Data: []byte(clash)})
	if err != nil || res.Proposal == "" || !strings.Contains(res.Note, "conflict") {
		t.Fatalf("the conflicting change: %+v %v", res, err)
	}
	after, _, _ := r.ReadHead(tea)
	if string(after) != string(got) {
		t.Fatalf("HEAD changed on a conflict:\n%s", after)
	}
	onBranch := conformance.Git(t, dir, "show", res.Proposal+":"+tea)
	if !strings.Contains(onBranch, "PETE-FACT") {
		t.Fatalf("the proposal lacks the change:\n%s", onBranch)
	}
}

// TestTeamWireRefusesStranger: over the socket, the writer asks the
// kernel who connects (SO_PEERCRED): this test's uid is no member, and
// the request's content cannot say otherwise.
func TestTeamWireRefusesStranger(t *testing.T) {
	dir, _, tw := teamWriter(t)
	sock := filepath.Join(t.TempDir(), "t.sock")
	ln, err := control.ListenUnix(sock) // CI's TMPDIR is longer than an address holds
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); host.ServeTeam(ctx, ln, tw, slog.New(slog.NewTextHandler(io.Discard, nil))) }()
	defer func() { cancel(); <-done }()
	head := conformance.Git(t, dir, "rev-parse", "HEAD")
	_, err = host.TeamClient{Socket: sock}.Put(ctx, tea, "", []byte("x"))
	if !errors.Is(err, team.ErrNotMember) {
		t.Fatalf("a stranger's put: %v", err)
	}
	if conformance.Git(t, dir, "rev-parse", "HEAD") != head {
		t.Fatal("HEAD moved")
	}
	// The same uid as a writer is taken.
	me := uint32(os.Getuid())
	tw.Members = func() (map[uint32]host.TeamMember, error) {
		return map[uint32]host.TeamMember{me: {User: "wendy", Role: team.Write}}, nil
	}
	old, _ := os.ReadFile(filepath.Join(dir, tea))
	res, err := host.TeamClient{Socket: sock}.Put(ctx, tea, gitrepo.BlobID(old), append(old, "more\n"...))
	if err != nil || res.Commit == "" {
		t.Fatalf("a member's put: %+v %v", res, err)
	}
}

// TestTeamWriterReview: any member lists the waiting proposals; only a
// maintainer approves (the proposal merged on HEAD) or rejects (the
// branch gone); a writer's or a proposer's verdict is refused and
// nothing moves; a tip that is not the proposal's is refused.
func TestTeamWriterReview(t *testing.T) {
	ctx := context.Background()
	dir, _, tw := teamWriter(t)
	propose := func() host.TeamResult {
		t.Helper()
		old, _ := os.ReadFile(filepath.Join(dir, tea))
		res, err := tw.Do(ctx, 1002, host.TeamChange{Op: host.TeamPut, Path: tea, Base: gitrepo.BlobID(old), Data: append(old, "pete's line\n"...)})
		if err != nil || res.Proposal == "" {
			t.Fatalf("propose: %+v %v", res, err)
		}
		return res
	}
	p := propose()
	list, err := tw.Do(ctx, 1001, host.TeamChange{Op: host.TeamList})
	if err != nil || len(list.Proposals) != 1 || list.Proposals[0].Branch != p.Proposal {
		t.Fatalf("a reader's list: %+v %v", list, err)
	}
	tip := list.Proposals[0].Tip
	head := conformance.Git(t, dir, "rev-parse", "HEAD")
	for _, uid := range []uint32{1001, 1002, 1003} {
		for _, op := range []host.TeamOp{host.TeamApprove, host.TeamReject} {
			if _, err := tw.Do(ctx, uid, host.TeamChange{Op: op, Branch: p.Proposal, Tip: tip}); !errors.Is(err, team.ErrNotMaintainer) {
				t.Fatalf("uid %d %s: %v, want ErrNotMaintainer", uid, op, err)
			}
		}
	}
	if _, err := tw.Do(ctx, 4242, host.TeamChange{Op: host.TeamList}); !errors.Is(err, team.ErrNotMember) {
		t.Fatalf("a stranger's list: %v", err)
	}
	if _, err := tw.Do(ctx, 1004, host.TeamChange{Op: host.TeamApprove, Branch: p.Proposal, Tip: "0000000"}); err == nil {
		t.Fatal("an approval at another tip was taken")
	}
	if now := conformance.Git(t, dir, "rev-parse", "HEAD"); now != head {
		t.Fatalf("a refused verdict moved HEAD %s -> %s", head, now)
	}
	res, err := tw.Do(ctx, 1004, host.TeamChange{Op: host.TeamApprove, Branch: p.Proposal, Tip: tip})
	if err != nil || res.Commit == "" {
		t.Fatalf("the maintainer's approval: %+v %v", res, err)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, tea)); !strings.Contains(string(got), "pete's line") {
		t.Fatalf("approved, the tree holds %q", got)
	}
	p2 := propose()
	list, _ = tw.Do(ctx, 1004, host.TeamChange{Op: host.TeamList})
	if len(list.Proposals) != 1 || list.Proposals[0].Branch != p2.Proposal {
		t.Fatalf("after the approval the list is %+v", list)
	}
	head = conformance.Git(t, dir, "rev-parse", "HEAD")
	if _, err := tw.Do(ctx, 1004, host.TeamChange{Op: host.TeamReject, Branch: p2.Proposal, Tip: list.Proposals[0].Tip}); err != nil {
		t.Fatalf("the maintainer's rejection: %v", err)
	}
	if list, _ = tw.Do(ctx, 1004, host.TeamChange{Op: host.TeamList}); len(list.Proposals) != 0 || conformance.Git(t, dir, "rev-parse", "HEAD") != head {
		t.Fatalf("after the rejection: %+v", list)
	}
}

// TestTeamWriterForcedProposal: a change sent as a proposal (what a
// member's consolidation would change in the team) is a branch whatever
// the role, even a maintainer's, HEAD unmoved; a reader's is refused.
func TestTeamWriterForcedProposal(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		uid  uint32
		user string
		want error
	}{{1002, "pete", nil}, {1003, "wendy", nil}, {1004, "mary", nil}, {1001, "rita", team.ErrReadOnly}} {
		dir, _, tw := teamWriter(t)
		head := conformance.Git(t, dir, "rev-parse", "HEAD")
		old, _ := os.ReadFile(filepath.Join(dir, tea))
		res, err := tw.Do(ctx, c.uid, host.TeamChange{Op: host.TeamPut, Path: tea, Base: gitrepo.BlobID(old), Data: append(old, "a dream's line\n"...), Propose: true, Note: "from a conversation"})
		if now := conformance.Git(t, dir, "rev-parse", "HEAD"); now != head {
			t.Fatalf("%s: a proposal moved HEAD", c.user)
		}
		if c.want != nil {
			if !errors.Is(err, c.want) {
				t.Fatalf("%s: %v, want %v", c.user, err, c.want)
			}
			continue
		}
		if err != nil || !strings.HasPrefix(res.Proposal, "mindmount/proposal/"+c.user+"/") {
			t.Fatalf("%s: %+v %v, want a proposal", c.user, res, err)
		}
		if msg := conformance.Git(t, dir, "log", "-1", "--format=%B", res.Proposal); !strings.Contains(msg, "consolidation") || !strings.Contains(msg, "Mindmount-User: "+c.user) {
			t.Fatalf("%s: the proposal's message:\n%s", c.user, msg)
		}
	}
}
