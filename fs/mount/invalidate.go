package mount

import (
	"os"
	"path"
	"strings"
	"sync"

	fusefs "github.com/hanwen/go-fuse/v2/fs"
)

// invalidator pushes stale data out of the kernel's caches. The kernel may
// keep entries, attributes and pages of backing files for a long time
// because it asks again only when told to: after every change the tracker
// saw beside the mount (an editor on the backing files, a moved HEAD).
//
// It runs on its own goroutine and never from a request handler: the kernel
// may hold the directory or page locks a notification waits for until one of
// our handlers answers, and the handlers must stay free to answer.
type invalidator struct {
	m *mountState

	mu      sync.Mutex
	paths   map[string]bool
	git     bool // drop the object fan-out listings too (after commits)
	wake    chan struct{}
	done    chan struct{}
	stopped sync.WaitGroup
}

func newInvalidator(m *mountState) *invalidator {
	return &invalidator{m: m, paths: map[string]bool{}, wake: make(chan struct{}, 1), done: make(chan struct{})}
}

func (v *invalidator) start() {
	v.stopped.Add(1)
	go v.loop()
}

func (v *invalidator) stop() {
	close(v.done)
	v.stopped.Wait()
}

// committedLater queues paths that a commit or a moved HEAD changed: their
// caches are dropped, and so are the listings of git's object folders,
// which the commit added to.
func (v *invalidator) committedLater(paths []string) {
	v.mu.Lock()
	v.git = true
	v.mu.Unlock()
	v.pathsLater(paths)
}

// pathsLater queues backing paths whose cached entries, attributes and
// pages are stale.
func (v *invalidator) pathsLater(paths []string) {
	v.mu.Lock()
	for _, p := range paths {
		v.paths[p] = true
	}
	v.mu.Unlock()
	v.poke()
}

func (v *invalidator) poke() {
	select {
	case v.wake <- struct{}{}:
	default:
	}
}

func (v *invalidator) loop() {
	defer v.stopped.Done()
	for {
		select {
		case <-v.done:
			return
		case <-v.wake:
		}
		v.mu.Lock()
		paths, git := v.paths, v.git
		v.paths, v.git = map[string]bool{}, false
		v.mu.Unlock()
		if v.m.closed.Load() {
			continue
		}
		for p := range paths {
			v.path(p)
		}
		if git {
			v.gitListings()
		}
	}
}

// path invalidates one backing path: the name in its directory (so the next
// access looks it up again and finds a replaced, new or deleted file), the
// file's attributes and pages, and the directory's listing.
func (v *invalidator) path(rel string) {
	rel = strings.Trim(path.Clean("/"+rel), "/")
	if rel == "" {
		return
	}
	dir, name := path.Split(rel)
	parent := v.m.lookupKnown(strings.TrimSuffix(dir, "/"))
	if parent == nil {
		return // the kernel never saw the directory: nothing cached below it
	}
	child := parent.GetChild(name)
	if child != nil {
		child.NotifyContent(0, 0)
	}
	if _, err := os.Lstat(v.m.abs(rel)); err != nil && child != nil {
		parent.NotifyDelete(name, child)
		parent.RmChild(name)
	} else {
		parent.NotifyEntry(name)
	}
	parent.NotifyContent(0, 0) // listing and mtime
}

// gitListings drops the kernel's cached listings of the loose-object
// folders, the only .git folders whose listings it may cache, after a
// commit or a moved HEAD, which may have added objects; git reads these
// listings to resolve abbreviated hashes
// ("git show 1a2b3c4" inside the mount).
func (v *invalidator) gitListings() {
	objects := v.m.lookupKnown(".git/objects")
	if objects == nil {
		return
	}
	for name, in := range objects.Children() {
		if gitFanout(".git/objects/" + name) {
			in.NotifyContent(0, 0)
		}
	}
}

// lookupKnown walks the inodes the kernel knows from the root; nil when a
// component was never looked up.
func (m *mountState) lookupKnown(rel string) *fusefs.Inode {
	in := m.rootInode()
	if rel == "" {
		return in
	}
	for _, seg := range strings.Split(rel, "/") {
		in = in.GetChild(seg)
		if in == nil {
			return nil
		}
	}
	return in
}
