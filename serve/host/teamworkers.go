package host

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/mindmount/mindmount/memgraph/team"
	"github.com/mindmount/mindmount/serve/control"
)

// TeamWorkerCommand is the mindmount subcommand of a team's writer.
const TeamWorkerCommand = "team-worker"

// teamWriters are serve's team writers: one process per team of
// ROOT/teams.conf, running as the team's uid and gid (no other group),
// serving the team repository's tracker to its members' workers on the
// socket serve made for it (TeamSocket: root's, group the team's, 0660,
// so only members' workers — which hold the team's group — and root
// can connect). Reload starts and stops them as teams come and go.
type teamWriters struct {
	mu      sync.Mutex
	running map[string]*teamProc
}

// teamProc is one team's writer: its supervising loop.
type teamProc struct {
	uid, gid int
	cancel   context.CancelFunc
	done     chan struct{}
}

// syncTeams starts a writer for each team of c that has none (or whose
// uid changed) and stops those of teams that are gone. Only root can run
// a process as a team's uid: without root there is none.
func (ws *Workers) syncTeams(c team.Config) {
	if os.Geteuid() != 0 {
		return
	}
	tw := &ws.teamw
	tw.mu.Lock()
	defer tw.mu.Unlock()
	if tw.running == nil {
		tw.running = map[string]*teamProc{}
	}
	for name, p := range tw.running {
		t, ok := c.Teams[name]
		if !ok || t.UID != p.uid || t.GID != p.gid || ws.isClosed() {
			p.cancel()
			<-p.done
			delete(tw.running, name)
		}
	}
	if ws.isClosed() {
		return
	}
	for _, name := range c.Names() {
		t := c.Teams[name]
		if _, ok := tw.running[name]; ok || t.UID <= 0 || t.GID <= 0 {
			continue
		}
		ctx, cancel := context.WithCancel(ws.life)
		p := &teamProc{uid: t.UID, gid: t.GID, cancel: cancel, done: make(chan struct{})}
		tw.running[name] = p
		go func() {
			defer close(p.done)
			ws.superviseTeam(ctx, name, uint32(t.UID), uint32(t.GID))
		}()
	}
}

// stopTeams stops every team's writer (Close).
func (ws *Workers) stopTeams() {
	ws.syncTeams(team.Config{})
}

// teamGrace is how long a team's writer has to commit what is pending
// after SIGTERM.
const teamGrace = 30 * time.Second

// teamRestart is how long a team's writer that ended waits to start again.
const teamRestart = time.Second

// superviseTeam runs team name's writer until ctx ends, again after
// teamRestart each time it ends by itself.
func (ws *Workers) superviseTeam(ctx context.Context, name string, uid, gid uint32) {
	log := ws.log.With("team", name)
	sock := TeamSocket(ws.cfg.Root, name)
	ln, err := listenTeam(sock, gid)
	if err != nil {
		log.Warn("team writer not started: its socket", "err", err)
		return
	}
	defer os.Remove(sock)
	defer ln.Close()
	for ctx.Err() == nil {
		if err := ws.runTeam(ctx, name, uid, gid, ln); err != nil && ctx.Err() == nil {
			log.Warn("team writer ended", "err", err)
		}
		select {
		case <-ctx.Done():
		case <-time.After(teamRestart):
		}
	}
}

// listenTeam makes team's socket at path: root's, the team's group, 0660
// (set before anyone can connect: made under a 0700 name and renamed).
func listenTeam(path string, gid uint32) (*net.UnixListener, error) {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	if fi, err := os.Lstat(dir); err != nil || !fi.IsDir() || fi.Sys().(*syscall.Stat_t).Uid != 0 {
		return nil, fmt.Errorf("%s is not root's folder", dir)
	}
	os.Chmod(dir, 0o755)
	os.Remove(path)
	// However long ROOT is: a socket's address holds 107 bytes.
	ln, err := control.ListenUnix(path)
	if err != nil {
		return nil, err
	}
	if err := os.Chown(path, 0, int(gid)); err != nil {
		ln.Close()
		return nil, err
	}
	if err := os.Chmod(path, 0o660); err != nil {
		ln.Close()
		return nil, err
	}
	return ln, nil
}

// runTeam runs one team writer process until it ends or ctx does (then
// SIGTERM: it commits what is pending; killed after teamGrace).
func (ws *Workers) runTeam(ctx context.Context, name string, uid, gid uint32, ln *net.UnixListener) error {
	dir := filepath.Join(ws.cfg.Root, team.Dir, name)
	if !IsMindmountRepo(dir) {
		return NotMindmountError(dir)
	}
	if err := GiveToTeam(dir, uid, gid); err != nil {
		ws.log.Warn("some files of the team stay root's", "team", name, "err", err)
	}
	lf, err := ln.File()
	if err != nil {
		return err
	}
	defer lf.Close()
	// Started as root, as a spare worker is (the binary may be where
	// only root can reach it), it becomes uid:gid with no other group
	// first thing, before it opens anything (DropPrivileges).
	cmd := exec.Command(ws.cfg.Exe, TeamWorkerCommand, "--root", ws.cfg.Root, "--team", name,
		"--uid", strconv.Itoa(int(uid)), "--gid", strconv.Itoa(int(gid)))
	cmd.Env = workerEnv()
	cmd.Dir = "/"
	cmd.ExtraFiles = []*os.File{lf} // fd 3
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return err
	}
	ws.log.Info("team writer started", "team", name, "pid", cmd.Process.Pid)
	ended := make(chan error, 1)
	go func() { ended <- cmd.Wait() }()
	select {
	case err := <-ended:
		return err
	case <-ctx.Done():
	}
	cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-ended:
		return err
	case <-time.After(teamGrace):
		cmd.Process.Kill()
		return errors.Join(errors.New("killed after the grace"), <-ended)
	}
}

// TeamMembers returns the members of team name under a serve ROOT by
// uid, read from root-owned data only: ROOT/teams.conf (team.Load
// refuses one root does not own or others may write) and the users
// registry (ROOT/users.json, which must be root's too). A request names
// no user: the uid the kernel reported is looked up here.
func TeamMembers(root, name string) (map[uint32]TeamMember, error) {
	c, err := team.Load(root)
	if err != nil {
		return nil, err
	}
	t, ok := c.Teams[name]
	if !ok {
		return nil, fmt.Errorf("%w %s", team.ErrUnknownTeam, name)
	}
	fi, err := os.Lstat(filepath.Join(root, RegistryFile))
	if err != nil {
		return nil, err
	}
	if st := fi.Sys().(*syscall.Stat_t); st.Uid != 0 || st.Mode&0o022 != 0 || !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not root's, or others may write it", RegistryFile)
	}
	users, err := ReadRegistry(root)
	if err != nil {
		return nil, err
	}
	out := map[uint32]TeamMember{}
	for _, e := range users {
		if r, ok := t.Members[e.ID]; ok && e.UID != 0 {
			out[e.UID] = TeamMember{User: e.ID, Role: r}
		}
	}
	return out, nil
}
