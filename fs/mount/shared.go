package mount

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"syscall"
	"time"

	fusefs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/mindmount/mindmount/fs/tracker"
	"github.com/mindmount/mindmount/memgraph"
	"github.com/mindmount/mindmount/memgraph/team"
)

// Team is a team repository projected at shared/<Name>/ of a mount
// (Options.Teams). Its subtree is served by a mount state of its own over
// the team's working tree, and every change goes to the team's tracker —
// the one writer of that repository — never to the personal one.
//
// A team without a Tracker is only read through this mount (a serve
// member's worker, which is not the team's writer): Graph serves its
// indexes and search, every change is refused with EROFS whatever Role
// says, and Listeners (optional) carries the changes its owner notices.
type Team struct {
	Name      string
	Role      team.Role
	Tracker   *tracker.Tracker
	Listeners *tracker.Listeners
	Graph     *memgraph.Graph
	// Forward, for a team without a Tracker whose Role Mutates, takes
	// the member's changes to the team's writer (shared_forward.go),
	// staged in StageDir (the worker's own 0700 folder, never in the
	// team's tree). Nil: every change is refused with EROFS.
	Forward  Forwarder
	StageDir string
}

// errTeamReadOnly: the member may not change this team (role read, or
// propose where proposals are not taken). EROFS, as for a read-only mount.
var errTeamReadOnly = errors.New("mindmount: this team is read-only for you")

// roleGate is a team's write policy: the member's role first, then the
// team tracker's own (the gate every change of any repository passes).
type roleGate struct {
	changes
	role team.Role
}

func (g roleGate) CanChange(rel string, s tracker.Scope) error {
	if !g.role.Commits() {
		return errTeamReadOnly
	}
	return g.changes.CanChange(rel, s)
}

func (g roleGate) CanCreate(rel string, s tracker.Scope) error {
	if !g.role.Commits() {
		return errTeamReadOnly
	}
	return g.changes.CanCreate(rel, s)
}

// teamDeps is what a team's mount state projects: its tracker with the
// member's role, or, without a tracker, its graph with every change
// refused (readOnlyTeam).
func teamDeps(t Team) (deps, error) {
	if t.Tracker != nil {
		g := t.Tracker.Graph()
		return deps{graph: g, tracker: roleGate{changes: t.Tracker, role: t.Role}, listen: t.Listeners.Add, search: searchFunc(g), sandbox: t.Tracker.NoteSandbox}, nil
	}
	if t.Graph == nil {
		return deps{}, fmt.Errorf("team %s: neither a tracker nor a graph", t.Name)
	}
	listen := func(tracker.Listener) {}
	if t.Listeners != nil {
		listen = t.Listeners.Add
	}
	if t.Forward != nil {
		return deps{graph: t.Graph, tracker: forwardGate{role: t.Role}, listen: listen, search: searchFunc(t.Graph)}, nil
	}
	return deps{graph: t.Graph, tracker: roleGate{changes: readOnlyTeam{}, role: team.Read}, listen: listen, search: searchFunc(t.Graph)}, nil
}

// readOnlyTeam is the changes of a team this mount may not write: every
// check refuses (errTeamReadOnly, EROFS) and nothing is ever reported.
type readOnlyTeam struct{}

func (readOnlyTeam) Touch(string, string)                  {}
func (readOnlyTeam) Refresh(...string)                     {}
func (readOnlyTeam) Renamed(string, string, string)        {}
func (readOnlyTeam) Status() []byte                        { return []byte("read-only: this mount does not write the team\n") }
func (readOnlyTeam) CanChange(string, tracker.Scope) error { return errTeamReadOnly }
func (readOnlyTeam) CanCreate(string, tracker.Scope) error { return errTeamReadOnly }
func (readOnlyTeam) Grow(string, int64) error              { return errTeamReadOnly }
func (readOnlyTeam) Truncate(string, int64) error          { return errTeamReadOnly }
func (readOnlyTeam) AppendRoom(string, int64) error        { return errTeamReadOnly }
func (readOnlyTeam) Removed(string)                        {}
func (readOnlyTeam) Moved(string, string)                  {}
func (readOnlyTeam) Exchanged(string, string)              {}

// present shows a team's entry as the member's (presentAs), if set.
func (m *mountState) present(a *fuse.Attr) {
	if m.presentAs != nil {
		a.Uid, a.Gid = m.presentAs.UID, m.presentAs.GID
	}
}

// revokeWithin bounds how long the kernel trusts what it knows of a
// team's entry in a per-user mount (presentAs): a read through a
// descriptor opened before the member was removed asks for the
// attributes again after it, and fails once serve has ended the mount.
// Without it the page cache would answer such a read for as long as the
// mount's timeout.
const revokeWithin = 500 * time.Millisecond

// revocableEntry and revocableAttr lower the kernel's timeouts to
// revokeWithin in a team's subtree of a per-user mount.
func (m *mountState) revocableEntry(out *fuse.EntryOut) {
	if m.presentAs == nil {
		return
	}
	// Zero is "the mount's default" to go-fuse, which fills it in later.
	if t := out.EntryTimeout(); t == 0 || t > revokeWithin {
		out.SetEntryTimeout(revokeWithin)
	}
	if t := out.AttrTimeout(); t == 0 || t > revokeWithin {
		out.SetAttrTimeout(revokeWithin)
	}
}

func (m *mountState) revocableAttr(out *fuse.AttrOut) {
	if t := out.Timeout(); m.presentAs != nil && (t == 0 || t > revokeWithin) {
		out.SetTimeout(revokeWithin)
	}
}

// sharedIno is the inode number of shared/ (a virtual folder).
const sharedIno = synthInoBase | 0xff

// newTeamStates builds one mount state per team, each over its own
// working tree, numbered apart from the personal mount's virtual inodes.
func newTeamStates(m *mountState, teams []Team, opt Options, log *slog.Logger) (map[string]*mountState, error) {
	if len(teams) == 0 {
		return nil, nil
	}
	out := map[string]*mountState{}
	for i, t := range teams {
		if err := team.ValidName(t.Name); err != nil {
			return nil, err
		}
		d, err := teamDeps(t)
		if err != nil {
			return nil, err
		}
		dir, err := filepath.Abs(d.graph.Root())
		if err != nil {
			return nil, err
		}
		tm, err := newMountState(dir, d, opt, log.With("team", t.Name))
		if err != nil {
			return nil, err
		}
		if t.Tracker == nil && t.Forward != nil && t.Role.Mutates() {
			if tm.fw, err = newForwarding(t); err != nil {
				return nil, err
			}
			m.keepFlush, tm.keepFlush = true, true
		}
		tm.inoSalt = uint64(i+1) << 40
		tm.presentAs = opt.Owner
		tm.appends = m.appends // the rawFS marks appends for the whole server
		out[t.Name] = tm
	}
	return out, nil
}

// sharedDir is shared/: one folder per attached team, each the root of
// that team's mount state. Nothing else can be made in it.
type sharedDir struct {
	fusefs.Inode
	m *mountState
}

var _ = (fusefs.NodeOnAdder)((*sharedDir)(nil))

// OnAdd links every team's root below shared/; go-fuse then answers
// lookups and listings from these children.
func (d *sharedDir) OnAdd(ctx context.Context) {
	for name, tm := range d.m.teams {
		var st syscall.Stat_t
		if err := syscall.Stat(tm.dir, &st); err != nil {
			d.m.log.Warn("team repository is missing", "team", name, "err", err)
			continue
		}
		in := d.NewPersistentInode(ctx, tm.root, fusefs.StableAttr{Mode: syscall.S_IFDIR, Ino: st.Ino})
		d.AddChild(name, in, false)
	}
}

var _ = (fusefs.NodeGetattrer)((*sharedDir)(nil))

func (d *sharedDir) Getattr(ctx context.Context, fh fusefs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	d.m.fillSynthAttr(&out.Attr, 0, 0o555|syscall.S_IFDIR)
	return 0
}

var _ = (fusefs.NodeMkdirer)((*sharedDir)(nil))

func (d *sharedDir) Mkdir(ctx context.Context, name string, mode uint32, out *fuse.EntryOut) (*fusefs.Inode, syscall.Errno) {
	return nil, syscall.EROFS
}

var _ = (fusefs.NodeCreater)((*sharedDir)(nil))

func (d *sharedDir) Create(ctx context.Context, name string, flags uint32, mode uint32, out *fuse.EntryOut) (*fusefs.Inode, fusefs.FileHandle, uint32, syscall.Errno) {
	return nil, nil, 0, syscall.EROFS
}

// linkTeams makes shared/ and links the teams' roots below it once the
// mount serves, before any team's invalidator can notify the kernel about
// an inode that is not in the tree yet.
func (m *mountState) linkTeams(ctx context.Context) {
	if len(m.teams) == 0 {
		return
	}
	in := m.rootInode().NewPersistentInode(ctx, &sharedDir{m: m}, fusefs.StableAttr{Mode: syscall.S_IFDIR, Ino: sharedIno})
	m.synthMu.Lock()
	m.synth[team.SharedDir] = in
	m.synthMu.Unlock()
}

// sharedChild returns shared/ when the mount has teams and name is it.
func (m *mountState) sharedChild(dir, name string, out *fuse.EntryOut) *fusefs.Inode {
	if dir != "" || name != team.SharedDir || len(m.teams) == 0 {
		return nil
	}
	m.synthMu.Lock()
	in := m.synth[team.SharedDir]
	m.synthMu.Unlock()
	if in != nil {
		m.fillSynthAttr(&out.Attr, 0, 0o555|syscall.S_IFDIR)
	}
	return in
}

// teamStates lists the mount states of m's teams.
func teamStates(m *mountState) []*mountState {
	var out []*mountState
	for _, tm := range m.teams {
		out = append(out, tm)
	}
	return out
}
