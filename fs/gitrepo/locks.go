package gitrepo

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/index"
)

// A lock file mindmount creates in .git (index.lock, a ref's .lock) is
// recorded, while it exists, in an owner file beside it naming the process
// (pid and start time, so a reused pid is not mistaken for us) and the lock
// file's inode. A crash leaves both behind; on start RecoverLocks finds an
// owner whose process is gone and whose inode is still the lock's, and
// knows that lock is mindmount's own and stale. A lock without such a record
// belongs to a git command and is never touched.

// lockOwner is the content of an owner file.
type lockOwner struct {
	pid   int
	start uint64 // process start time, in clock ticks since boot (0: unknown)
	ino   uint64 // inode of the lock file
	lock  string // absolute path of the lock file
}

func (o lockOwner) String() string {
	return fmt.Sprintf("%d %d %d %s\n", o.pid, o.start, o.ino, o.lock)
}

func parseOwner(b []byte) (lockOwner, bool) {
	f := strings.SplitN(strings.TrimSuffix(string(b), "\n"), " ", 4)
	if len(f) != 4 {
		return lockOwner{}, false
	}
	pid, err1 := strconv.Atoi(f[0])
	start, err2 := strconv.ParseUint(f[1], 10, 64)
	ino, err3 := strconv.ParseUint(f[2], 10, 64)
	if err1 != nil || err2 != nil || err3 != nil || pid <= 0 || f[3] == "" {
		return lockOwner{}, false
	}
	return lockOwner{pid: pid, start: start, ino: ino, lock: f[3]}, true
}

// ownerPath is where the owner record of a lock of this kind lives.
func (r *Repo) ownerPath(kind string) string {
	return filepath.Join(r.gitDir, "mindmount-"+kind+".owner")
}

// createLock creates lock exclusively and records us as its owner. The
// record is written first (inode 0: "about to create"), so a crash between
// creating the lock and recording it cannot leave an unowned lock behind.
func (r *Repo) createLock(lock, kind string, flag int) (*os.File, error) {
	o := lockOwner{pid: os.Getpid(), start: selfStart, lock: lock}
	// Not synced: the record only matters after a process crash, when the
	// page cache holds it; after a power loss nobody is alive either way
	// and the lock is recognised by its dead owner all the same.
	if err := os.WriteFile(r.ownerPath(kind), []byte(o.String()), r.filePerm(false)); err != nil {
		return nil, fmt.Errorf("record lock owner: %w", err)
	}
	f, err := os.OpenFile(lock, flag|os.O_CREATE|os.O_EXCL, r.filePerm(false))
	if err != nil {
		r.dropOwner(kind)
		return nil, err
	}
	if fi, err := f.Stat(); err == nil {
		o.ino = statOf(fi).ino
		os.WriteFile(r.ownerPath(kind), []byte(o.String()), r.filePerm(false))
	}
	return f, nil
}

// dropOwner forgets the record once the lock file is gone (renamed into
// place or removed).
func (r *Repo) dropOwner(kind string) { os.Remove(r.ownerPath(kind)) }

// LockRepair says what RecoverLocks did.
type LockRepair struct {
	// Removed lists the stale lock files of a crashed mindmount process that
	// were removed.
	Removed []string
	// Foreign lists lock files held by something else (a git command):
	// left alone; commits wait for them.
	Foreign []string
	// IndexFixed lists the paths whose .git/index entry disagreed with
	// HEAD and was reset to it (the work tree is never touched).
	IndexFixed []string
}

// Empty reports whether nothing was found.
func (lr LockRepair) Empty() bool {
	return len(lr.Removed) == 0 && len(lr.Foreign) == 0 && len(lr.IndexFixed) == 0
}

// RecoverLocks repairs what a crash of mindmount in the middle of a commit
// can leave in .git, with no manual step: it removes the lock files a dead
// mindmount process owned (index.lock, the branch's .lock), and then brings
// .git/index in line with HEAD — a crash after the branch moved and before
// the new index was renamed into place leaves the old index, which makes
// "git status" show the commit's files as phantom changes. Lock files that
// are not mindmount's are reported in Foreign and left alone. Call it at
// start, before the first commit, with no other mindmount writer alive on the
// repository (LockDaemon).
func (r *Repo) RecoverLocks() (LockRepair, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var lr LockRepair
	for _, kind := range []string{"index", "ref", "packed-refs"} {
		b, err := os.ReadFile(r.ownerPath(kind))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return lr, err
		}
		o, ok := parseOwner(b)
		if ok && processAlive(o.pid, o.start) {
			continue // a live mindmount (mindmount consolidate) holds it now
		}
		if ok {
			fi, err := os.Lstat(o.lock)
			if err == nil && (statOf(fi).ino == o.ino || o.ino == 0 && !fi.ModTime().Before(ownerTime(r.ownerPath(kind)))) {
				if err := os.Remove(o.lock); err != nil {
					return lr, fmt.Errorf("remove stale %s: %w", o.lock, err)
				}
				lr.Removed = append(lr.Removed, o.lock)
			}
		}
		r.dropOwner(kind)
	}
	if _, err := os.Lstat(r.idx.path + ".lock"); err == nil {
		lr.Foreign = append(lr.Foreign, r.idx.path+".lock")
		return lr, nil // the index is not ours to repair while git holds it
	}
	fixed, err := r.repairIndexLocked()
	lr.IndexFixed = fixed
	return lr, err
}

// repairIndexLocked resets the stage-0 entries of .git/index to HEAD's
// tree where they differ (what "git reset" does, keeping the work tree),
// keeping the stat data of entries that already match. It returns the
// paths it changed. Call with r.mu held.
func (r *Repo) repairIndexLocked() ([]string, error) {
	h, err := r.readHeadRef()
	if err != nil {
		return nil, err
	}
	files, _, err := r.headFiles(h.tree)
	if err != nil {
		return nil, err
	}
	idx, err := r.idx.load()
	if err != nil {
		return nil, err
	}
	var fixed []string
	keep := make(map[string]*index.Entry, len(files))
	for _, e := range idx.Entries {
		he, inHead := files[e.Name]
		switch {
		case !inHead || e.Stage != 0:
			fixed = append(fixed, e.Name)
		case e.Hash != he.hash || uint32(e.Mode) != he.mode:
			fixed = append(fixed, e.Name)
		default:
			keep[e.Name] = e
		}
	}
	for rel := range files {
		if keep[rel] == nil && !slices.Contains(fixed, rel) {
			fixed = append(fixed, rel)
		}
	}
	if len(fixed) == 0 {
		return nil, nil
	}
	lock, err := r.lockIndex()
	if err != nil {
		return nil, err
	}
	out := &index.Index{Version: idx.Version}
	if out.Version == 0 || out.Version > 3 {
		out.Version = 2
	}
	for rel, he := range files {
		if e := keep[rel]; e != nil {
			out.Entries = append(out.Entries, e)
			continue
		}
		abs := filepath.Join(r.dir, filepath.FromSlash(rel))
		var data []byte
		if he.mode == modeFile || he.mode == modeExec {
			data, _ = r.readObject(plumbing.BlobObject, he.hash) // stat data only when it reads
		}
		out.Entries = append(out.Entries, newEntry(rel, abs, he.hash, he.mode, data))
	}
	sort.SliceStable(out.Entries, func(i, j int) bool { return entryLess(out.Entries[i], out.Entries[j]) })
	if err := r.commitIndex(lock, out, commitPoints); err != nil {
		return nil, err
	}
	sort.Strings(fixed)
	return fixed, nil
}

// ownerTime is when an owner record was written.
func ownerTime(p string) time.Time {
	fi, err := os.Stat(p)
	if err != nil {
		return time.Time{}
	}
	return fi.ModTime()
}

// ErrDaemonRunning is returned by LockDaemon, LockServe and LockAlone when
// another process serves the repository already, and by LockAlone and
// LockServe when the other kind holds it in this process.
var ErrDaemonRunning = errors.New("another mindmount process is already serving this repository")

// daemonLocks are the repositories this process serves: a second Tracker
// on the same repository inside one process (a test, a host that opened a
// user twice) shares the lock instead of refusing itself, and so does a
// command holding it for its lone writes (mindmount import, add, sync).
// What is never shared, in one process as across two, is a lone writer's
// commit (LockAlone) beside a serving tracker's (LockServe): the holders
// are counted by kind, and a lock of one kind refuses while the other is
// held.
var (
	daemonMu    sync.Mutex
	daemonLocks = map[string]*daemonLock{}
)

// lockKind says who takes the daemon lock.
type lockKind int

const (
	lockPlain lockKind = iota // a command that is, for its run, the one writer
	lockServe                 // a tracker serving the repository
	lockAlone                 // one commit of a lone writer (tracker.Alone)
)

type daemonLock struct {
	n     int
	kinds [3]int // holders by lockKind
	f     *os.File
	path  string
}

// LockDaemon takes the repository's daemon lock, .git/mindmount-daemon.lock,
// an flock the kernel releases when the process dies however it dies, so a
// crash never leaves it behind. A second process (mindmount mount, watch,
// serve or mcp on the same repository) gets ErrDaemonRunning with the
// holder's pid. Call the returned function to release it.
func (r *Repo) LockDaemon() (unlock func(), err error) { return r.lockDaemon(lockPlain) }

// LockServe is LockDaemon for a tracker that serves the repository: while
// it is held, a lone writer's commit (LockAlone) in this process is
// refused too, and it is refused itself while one is under way.
func (r *Repo) LockServe() (unlock func(), err error) { return r.lockDaemon(lockServe) }

// LockAlone is the daemon lock for one commit of a writer that no tracker
// serves (tracker.Alone): refused with ErrDaemonRunning while a tracker
// serves the repository, in another process (its flock) or in this one
// (LockServe), so that there is one writer per repository at every
// instant. A command holding LockDaemon for its run shares it.
func (r *Repo) LockAlone() (unlock func(), err error) { return r.lockDaemon(lockAlone) }

// other is the kind a lock of kind k may not be shared with.
func (k lockKind) other() lockKind {
	switch k {
	case lockServe:
		return lockAlone
	case lockAlone:
		return lockServe
	}
	return lockPlain
}

func (r *Repo) lockDaemon(k lockKind) (unlock func(), err error) {
	p := filepath.Join(r.gitDir, "mindmount-daemon.lock")
	daemonMu.Lock()
	defer daemonMu.Unlock()
	if l := daemonLocks[p]; l != nil {
		if k != lockPlain && l.kinds[k.other()] > 0 {
			what := "a tracker in this process serves it"
			if k == lockServe {
				what = "a lone writer in this process is committing"
			}
			return nil, fmt.Errorf("%s: %w (%s)", r.dir, ErrDaemonRunning, what)
		}
		l.n++
		l.kinds[k]++
		return r.daemonUnlock(p, k), nil
	}
	f, err := openDaemonLock(p)
	if err != nil {
		return nil, fmt.Errorf("daemon lock: %w", err)
	}
	if err := flock(f); err != nil {
		b := make([]byte, 32)
		n, _ := f.ReadAt(b, 0)
		f.Close()
		holder := strings.TrimSpace(string(b[:n]))
		if holder != "" {
			holder = " (pid " + holder + ")"
		}
		if errors.Is(err, errWouldBlock) {
			return nil, fmt.Errorf("%s: %w%s; stop it first, or use its mount", r.dir, ErrDaemonRunning, holder)
		}
		return nil, fmt.Errorf("daemon lock: %w", err)
	}
	writeHolder(f)
	l := &daemonLock{n: 1, f: f, path: p}
	l.kinds[k] = 1
	daemonLocks[p] = l
	return r.daemonUnlock(p, k), nil
}

// holderWidth is the size of the lock file's content: the holder's pid,
// padded with spaces to one width, so that a holder overwrites its
// predecessor in place (truncating the file costs a journal commit: ~40×
// the lock itself).
const holderWidth = 16

// writeHolder records this process as the lock's holder.
func writeHolder(f *os.File) {
	if fi, err := f.Stat(); err == nil && fi.Size() != holderWidth {
		f.Truncate(0) // a file of another shape: once
	}
	f.WriteAt([]byte(fmt.Sprintf("%-*d\n", holderWidth-1, os.Getpid())), 0)
}

// openDaemonLock opens the lock file for writing the holder's pid, or, when
// another uid made it (root provisioning a user's repository before the
// hand-over), for reading only: an flock needs no write access.
func openDaemonLock(p string) (*os.File, error) {
	f, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE, 0o644)
	if errors.Is(err, fs.ErrPermission) {
		return os.Open(p)
	}
	return f, err
}

func (r *Repo) daemonUnlock(p string, k lockKind) func() {
	var once sync.Once
	return func() {
		once.Do(func() {
			daemonMu.Lock()
			defer daemonMu.Unlock()
			l := daemonLocks[p]
			if l == nil {
				return
			}
			l.kinds[k]--
			if l.n--; l.n == 0 {
				delete(daemonLocks, p)
				l.f.Close() // closing the descriptor drops the flock
			}
		})
	}
}

// holdsDaemon reports whether this process holds the repository's daemon
// lock: it is the repository's one writer.
func (r *Repo) holdsDaemon() bool {
	daemonMu.Lock()
	defer daemonMu.Unlock()
	return daemonLocks[filepath.Join(r.gitDir, "mindmount-daemon.lock")] != nil
}
