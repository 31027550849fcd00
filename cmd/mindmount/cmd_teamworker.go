package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"

	"github.com/mindmount/mindmount/memgraph"
	"github.com/mindmount/mindmount/memgraph/team"
	"github.com/mindmount/mindmount/serve/host"
)

// teamWorkerOptions are the flags serve starts a team's writer with.
type teamWorkerOptions struct {
	daemon   daemonFlags
	root     string
	team     string
	uid, gid uint
}

func (o *teamWorkerOptions) AddFlags(fl *flag.FlagSet) {
	o.daemon.AddFlags(fl)
	fl.StringVar(&o.root, "root", "", "the serve ROOT")
	fl.StringVar(&o.team, "team", "", "the team")
	fl.UintVar(&o.uid, "uid", 0, "the team's uid, which the worker becomes")
	fl.UintVar(&o.gid, "gid", 0, "the team's gid, which the worker becomes")
}

// teamWorkerCommand is "mindmount team-worker".
var teamWorkerCommand = newCommand(command{
	name:  host.TeamWorkerCommand,
	usage: host.TeamWorkerCommand + " (started by mindmount serve, not by hand)",
	help: `Internal: mindmount serve starts one team worker per team of ROOT/teams.conf,
with the team's uid and gid: the team repository's one writer. Members'
workers hand it their changes on the socket serve made (fd 3). It is not
meant to be started by hand.`,
}, runTeamWorker)

// teamListenFd is the descriptor of the socket serve hands a team worker.
const teamListenFd = 3

func runTeamWorker(_ context.Context, o *teamWorkerOptions, args []string) error {
	if len(args) != 0 || o.root == "" || team.ValidName(o.team) != nil || o.uid == 0 || o.gid == 0 {
		return errors.New("mindmount team-worker is started by mindmount serve")
	}
	// The team's uid and gid and no other group, before anything is
	// opened: the kernel keeps the writer to the team's own files.
	if err := host.DropPrivileges(uint32(o.uid), uint32(o.gid)); err != nil {
		return fmt.Errorf("team worker for %s: %w", o.team, err)
	}
	if os.Geteuid() == 0 || uint(os.Getuid()) != o.uid || uint(os.Getgid()) != o.gid {
		return fmt.Errorf("team worker for %s runs as uid %d gid %d, not %d %d", o.team, os.Getuid(), os.Getgid(), o.uid, o.gid)
	}
	unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0)
	ln, err := net.FileListener(os.NewFile(teamListenFd, "team"))
	if err != nil {
		return fmt.Errorf("team %s: the socket from serve: %w", o.team, err)
	}
	log := slog.Default().With("team", o.team)
	cfg := o.daemon.baseConfig(false, log)
	cfg.Consolidate, cfg.Services = false, nil
	cfg.Author = o.team
	cfg.Root = o.root
	cfg.Operator = &memgraph.OperatorSource{Path: filepath.Join(o.root, host.OperatorConfigFile), Strict: true, RootOnly: true}
	dir := filepath.Join(o.root, team.Dir, o.team)
	return serveRuntime(dir, o.team, cfg, func(ctx context.Context, rt *host.Runtime) (<-chan error, func(bool) error, error) {
		// The team's group reads what the writer writes (members'
		// workers; the repository's folder, 0750, keeps others out): a
		// private repository's 0600 files would lock the members out.
		if rt.Repo.Private() {
			if err := rt.Repo.SetPrivate(false); err != nil {
				return nil, nil, err
			}
		}
		tw := &host.TeamWriter{Name: o.team, Writer: rt.Tracker, Repo: rt.Repo,
			Members: func() (map[uint32]host.TeamMember, error) { return host.TeamMembers(o.root, o.team) }}
		sctx, cancel := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() {
			defer close(done)
			host.ServeTeam(sctx, ln, tw, log)
		}()
		log.Info("team worker: serving", "dir", dir)
		return nil, func(bool) error { cancel(); <-done; return nil }, nil
	})
}
