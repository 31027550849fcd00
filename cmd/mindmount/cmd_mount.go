package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"runtime/pprof"

	"github.com/mindmount/mindmount/fs/mount"
	"github.com/mindmount/mindmount/memgraph"
	"github.com/mindmount/mindmount/serve/host"
)

// mountCommand is "mindmount mount".
var mountCommand = newCommand(command{
	name:    "mount",
	usage:   "mount REPO MOUNTPOINT [--debounce 1s] [--allow-other] [--debug]",
	summary: "mount a memory repository with FUSE; every change becomes a commit",
	help: `Mounts the mindmount repository REPO at MOUNTPOINT (an empty directory) and
serves it in the foreground. Use the mount with ordinary tools: cat, grep,
echo >>, sed -i, vim. Every file of REPO reads as it is on disk; the mount
adds, never stored in git:

  user_memory.md, character_memory.md   ranked indexes of active memories
  CONTEXT.md                            the compiled context
  .mindmount/status                        invalid files, pending changes, last commit
  .mindmount/search/QUERY                  recall: cat it to rank memories for QUERY
  .mindmount/consolidate                   write anything to request a consolidation

A write lands in REPO at once. A burst of changes is committed once the
writes pause for --debounce (never later than --max-wait), as one commit
whose author is the writing process mapped to an identity (vim -> editor,
anything else -> agent). Invalid memory files stay on disk, uncommitted,
and are reported in .mindmount/status until fixed. Editor temp files are never
committed. .git is readable (git log works inside the mount) and refuses
writes with EROFS; read_only memories refuse every change. Edits made in
REPO beside the mount, git pull and git revert are picked up.

On start, anything valid left uncommitted is committed first. The line
"mindmount: mounted REPO at MOUNTPOINT" on standard output says the mount is
usable. SIGINT or SIGTERM commits what is pending, unmounts and exits 0.

As root the mount is made directly; as a normal user it needs read-write
access to /dev/fuse (usually mode 0666), fusermount3 (package fuse3) and a
mountpoint you can write. --allow-other lets other users and containers the
mount is bind-mounted into use it (as non-root it needs user_allow_other in
/etc/fuse.conf). What is missing is checked first and named in one line,
before anything changes. Without FUSE, use "mindmount watch".

Example:

    mindmount init ~/memory
    mkdir -p /mnt/memory
    mindmount mount ~/memory /mnt/memory`,
}, runMount)

// mountOptions are the flags of "mindmount mount".
type mountOptions struct {
	daemon            daemonFlags
	allowOther, debug bool
}

func (o *mountOptions) AddFlags(fl *flag.FlagSet) {
	o.daemon.AddFlags(fl)
	fl.BoolVar(&o.allowOther, "allow-other", false, "let other users (and containers) use the mount")
	fl.BoolVar(&o.debug, "debug", false, "log every FUSE request")
}

// runMount mounts a repository and serves it until a signal.
func runMount(_ context.Context, o *mountOptions, args []string) error {
	if len(args) != 2 {
		return errUsage
	}
	dir, mnt := args[0], args[1]
	if p := os.Getenv("MINDMOUNT_CPUPROFILE"); p != "" {
		// A diagnostic for the mount benchmark: where the daemon
		// spends its CPU (go tool pprof mindmount PROFILE).
		if f, err := os.Create(p); err == nil {
			if pprof.StartCPUProfile(f) == nil {
				defer pprof.StopCPUProfile()
			}
		}
	}
	log := slog.Default()
	return serveMount(dir, mnt, o.daemon.runtimeConfig(false, log), mount.Options{
		AllowOther: o.allowOther,
		Debug:      o.debug,
		Logger:     log,
		// For benchmarks: let the kernel do file I/O on the backing
		// files (see fs.Options.Passthrough).
		Passthrough: os.Getenv("MINDMOUNT_PASSTHROUGH") != "",
	})
}

// serveMount serves the repository dir at mnt until SIGINT or SIGTERM (exit
// 0, pending changes committed) or until the mount disappears from outside
// (fusermount3 -u: an error, so a supervisor notices).
func serveMount(dir, mnt string, cfg host.RuntimeConfig, opt mount.Options) error {
	log := opt.Logger
	if err := requireMindmountRepo(dir); err != nil {
		return err
	}
	// The mountpoint and FUSE are checked before the repository is touched:
	// a mount that cannot happen changes nothing.
	allowOther := ""
	if opt.AllowOther {
		allowOther = "--allow-other"
	}
	if err := liveMountError(mnt); err != nil { // cmd_mount_live.go
		return err
	}
	if err := mount.CheckMount(dir, mnt, allowOther); err != nil {
		return err
	}
	err := runDaemon(dir, cfg, func(_ context.Context, rt *host.Runtime) (<-chan error, func(bool) error, error) {
		opt.OnConsolidate = rt.RequestConsolidation
		teams, stopTeams, err := openTeams(context.Background(), dir, cfg, log)
		if err != nil {
			return nil, nil, err
		}
		opt.Teams = teams
		// The indexes, CONTEXT.md and recall read across the teams,
		// each hit labelled shared/<team>/.
		scopes := make([]memgraph.Scope, len(teams))
		for i, t := range teams {
			scopes[i] = memgraph.Scope{Name: t.Name, Graph: t.Tracker.Graph()}
		}
		if err := rt.Graph.AttachScopes(scopes); err != nil {
			stopTeams()
			return nil, nil, err
		}
		srv, err := mount.Mount(mnt, rt.Tracker, rt.Listeners, opt)
		if err != nil {
			stopTeams()
			return nil, nil, err
		}
		gone := make(chan error, 1)
		go func() {
			<-unmountedOutside(srv)
			gone <- errUnmountedOutside(mnt)
		}()
		fmt.Fprintf(stdout, "mindmount: mounted %s at %s\n", dir, mnt)
		return gone, func(outside bool) error {
			defer stopTeams() // after the unmount: nothing writes to a team any more
			if outside {
				return nil
			}
			err := mount.Unmount(srv, mnt)
			if err != nil {
				log.Warn("unmount", "err", err)
			}
			return err
		}, nil
	})
	if err == nil {
		log.Info("unmounted; pending changes committed", "repo", dir, "mountpoint", mnt)
	}
	return err
}
