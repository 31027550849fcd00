package mount

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	fusefs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/mindmount/mindmount/fs/tracker"
	"github.com/mindmount/mindmount/memgraph"
	"github.com/mindmount/mindmount/memgraph/subtree"
)

// Errors of Mount a caller may want to tell apart.
var (
	ErrNoFUSE         = errors.New("/dev/fuse is missing")
	ErrMountpointBusy = errors.New("mountpoint is busy")
)

// mount mounts the backing tree of d.graph at mountpoint.
func mount(mountpoint string, d deps, opt Options) (*fuse.Server, *mountState, error) {
	log := opt.Logger
	if log == nil {
		log = slog.Default()
	}
	dir, err := filepath.Abs(d.graph.Root())
	if err != nil {
		return nil, nil, err
	}
	mnt, err := absMountpoint(dir, mountpoint, opt.AllowOther)
	if err != nil {
		return nil, nil, err
	}
	m, err := newMountState(dir, d, opt, log)
	if err != nil {
		return nil, nil, err
	}
	if m.teams, err = newTeamStates(m, opt.Teams, opt, log); err != nil {
		return nil, nil, err
	}
	if opt.Owner != nil && d.sandbox != nil {
		m.callers.writer = sandboxWriter(d.sandbox)
	}
	fopts := fuseOptions(fuseConfig{
		fsName:     dir,
		allowOther: opt.AllowOther,
		// Other users reach the mount: let the kernel check mode bits, as
		// the daemon (often root) would otherwise serve anyone anything.
		kernelChecks: opt.AllowOther,
		debug:        opt.Debug,
		cacheTimeout: opt.CacheTimeout,
		log:          log,
	})
	if isPassedFd(mountpoint) {
		// The parent mounted already: go-fuse must take the descriptor
		// as it is. A direct mount would be tried first, of the path
		// "/dev/fd/N" — which resolves to /dev/fuse, and a process
		// holding CAP_SYS_ADMIN would mount over /dev/fuse itself,
		// breaking FUSE for the whole host.
		fopts.MountOptions.DirectMount = false
		fopts.MountOptions.DirectMountStrict = false
	}
	var raw fuse.RawFileSystem = &rawFS{RawFileSystem: fusefs.NewNodeFS(m.root, fopts), appends: m.appends}
	if opt.Owner != nil {
		raw = &ownerGuard{RawFileSystem: raw, uid: opt.Owner.UID}
	}
	srv, err := serve(mnt, raw, &fopts.MountOptions)
	if err != nil {
		if m.tree != nil {
			m.tree.Close()
		}
		return nil, nil, explainMountError(mnt, err)
	}
	m.linkTeams(context.Background())
	m.attach()
	for _, tm := range m.teams {
		tm.attach()
	}
	go func() {
		srv.Wait()
		for _, s := range append(teamStates(m), m) {
			s.closed.Store(true)
			s.inval.stop()
			if s.tree != nil {
				s.tree.Close()
			}
		}
	}()
	return srv, m, nil
}

// absMountpoint is mountpoint made absolute and checked (preflight), or
// as it is when it is a descriptor handed down by serve (/dev/fd/N): the
// daemon mounted it and checked the mountpoint; there is none here.
func absMountpoint(dir, mountpoint string, allowOther bool) (string, error) {
	if isPassedFd(mountpoint) {
		return mountpoint, nil
	}
	mnt, err := filepath.Abs(mountpoint)
	if err != nil {
		return "", err
	}
	flag := ""
	if allowOther {
		flag = "--allow-other"
	}
	return mnt, preflight(dir, mnt, flag)
}

// sandboxWriter names, for a served user's commit, the sandbox or
// container a write came from (its agents run there).
func sandboxWriter(note func(string)) func(pid uint32) {
	sb := newSandboxes()
	return func(pid uint32) {
		if name := sb.of(pid); name != "" {
			note(name)
		}
	}
}

// fuseConfig is what tells the single-user mount (mount) and the
// per-user mounts of serve apart in their go-fuse options.
type fuseConfig struct {
	fsName       string // the source column of /proc/mounts
	allowOther   bool
	kernelChecks bool // "default_permissions": the kernel checks mode bits
	debug        bool
	cacheTimeout time.Duration // of entries, attributes and absences; <= 0: an hour
	log          *slog.Logger
}

// fuseOptions builds the go-fuse options of every mindmount mount.
func fuseOptions(c fuseConfig) *fusefs.Options {
	timeout := c.cacheTimeout
	if timeout <= 0 {
		timeout = time.Hour
	}
	fuseLog := slog.LevelDebug
	if c.debug {
		fuseLog = slog.LevelInfo
	}
	fopts := &fusefs.Options{
		EntryTimeout:    &timeout,
		AttrTimeout:     &timeout,
		NegativeTimeout: &timeout,
		// go-fuse logs through the standard logger; feed it to slog.
		Logger: slog.NewLogLogger(c.log.Handler(), slog.LevelDebug),
		MountOptions: fuse.MountOptions{
			AllowOther:    c.allowOther,
			Debug:         c.debug,
			FsName:        c.fsName,
			Name:          "mindmount",
			DirectMount:   true, // as root: mount(2) directly; otherwise fusermount3
			DisableXAttrs: true, // git keeps no xattrs; saves a round trip per file
			MaxReadAhead:  128 << 10,
			// Entries and attributes are cached for an hour, so READDIRPLUS
			// mostly re-sends what the kernel already has; plain READDIR
			// halved "find" over a 10,000-file repository (scripts/bench-mount.sh).
			DisableReadDirPlus: true,
			Logger:             slog.NewLogLogger(c.log.Handler(), fuseLog),
		},
	}
	if c.kernelChecks {
		fopts.MountOptions.Options = append(fopts.MountOptions.Options, "default_permissions")
	}
	return fopts
}

// serve mounts raw at mnt and serves it (fusefs.Mount, with our rawFS in
// front of go-fuse's bridge).
func serve(mnt string, raw fuse.RawFileSystem, opts *fuse.MountOptions) (*fuse.Server, error) {
	srv, err := fuse.NewServer(raw, mnt, opts)
	if err != nil {
		return nil, err
	}
	go srv.Serve()
	if err := srv.WaitMount(); err != nil {
		return nil, err
	}
	return srv, nil
}

// newMountState builds the state and root node of a mount of the backing
// tree dir (absolute) without mounting it: mount puts it at the root of a
// FUSE server. attach
// starts it.
func newMountState(dir string, d deps, opt Options, log *slog.Logger) (*mountState, error) {
	// .mindmount holds the daemon's virtual files; it may not exist yet in a
	// fresh repository (an empty directory is invisible to git).
	if err := os.MkdirAll(filepath.Join(dir, memgraph.StateDir), 0o755); err != nil {
		return nil, fmt.Errorf("create %s: %w", memgraph.StateDir, err)
	}

	var st syscall.Stat_t
	if err := syscall.Stat(dir, &st); err != nil {
		return nil, err
	}
	m := &mountState{
		deps:    d,
		opt:     opt,
		log:     log,
		dir:     dir,
		callers: newCallerNames(),
		started: time.Now(),
		owner:   backingOwner(dir),
		synth:   map[string]*fusefs.Inode{},
		appends: &appendRequests{},
	}
	m.inval = newInvalidator(m)
	if t, err := subtree.Open(dir); err == nil {
		m.tree = t
	} else {
		log.Warn("cannot open the backing root; every open will fail", "dir", dir, "err", err)
	}
	lr := &fusefs.LoopbackRoot{Path: dir, Dev: uint64(st.Dev)}
	m.root = &node{LoopbackNode: &fusefs.LoopbackNode{RootData: lr}, m: m}
	lr.RootNode = m.root

	return m, nil
}

// attach starts the invalidator and makes it a listener of the tracker.
func (m *mountState) attach() {
	m.inval.start()
	m.listen(tracker.Listener{
		Changed: m.inval.committedLater,
		// An edit beside the mount is dropped from the kernel's caches as
		// soon as fsnotify reports it, not a debounce later when it is
		// committed. Our own writes are reported too: the kernel already
		// knows them, so they are skipped (see ownWrites).
		Observed: func(rel string) {
			if !m.own.ours(m.abs(rel), rel) {
				m.inval.pathsLater([]string{rel})
			}
		},
	})
}

// isMountpoint reports whether path appears as a mount point in
// /proc/self/mountinfo.
func isMountpoint(p string) (bool, error) {
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return false, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) > 4 && unescapeMount(f[4]) == p {
			return true, nil
		}
	}
	return false, nil
}

// unescapeMount undoes the octal escapes of /proc/self/mountinfo (\040 for
// a space).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			var v int
			if _, err := fmt.Sscanf(s[i+1:i+4], "%03o", &v); err == nil {
				b.WriteByte(byte(v))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// Unmount unmounts a mount made by Mount. When the mount is busy (a shell
// still has its working directory inside) it retries briefly, then detaches
// it lazily: the kernel finishes the unmount once the last user leaves.
func Unmount(srv *fuse.Server, mountpoint string) error {
	var err error
	for i := 0; i < 3; i++ { // each try already retries for ~150ms
		if err = srv.Unmount(); err == nil {
			return nil
		}
	}
	if lerr := syscall.Unmount(mountpoint, syscall.MNT_DETACH); lerr != nil {
		return fmt.Errorf("unmount %s: %v; lazy unmount: %w", mountpoint, err, lerr)
	}
	return nil
}
