package mount

import (
	"sync"
	"syscall"
	"time"
)

// ownWindow is how long after a change through the mount fsnotify's report
// of it is taken for our own: the report arrives within milliseconds.
const ownWindow = 2 * time.Second

// ownWrites remembers the paths changed through the mount a moment ago and
// what the backing file looked like right after, so that fsnotify's echo
// of them does not make the invalidator drop caches the kernel keeps
// correct by itself (that doubled the cost of creating files). A report
// whose file no longer looks as we left it (size, mtime, inode) is an edit
// beside the mount and is invalidated at once: appends made beside the
// mount between two appends through it are seen.
type ownWrites struct {
	mu    sync.Mutex
	at    map[string]ownMark
	sweep time.Time
}

type ownMark struct {
	at   time.Time
	st   fileStamp
	gone bool // no file after the change (unlink, rename away)
}

// fileStamp is what tells one version of a file from the next.
type fileStamp struct {
	size, ino      uint64
	mtimeS, mtimeN int64
}

func stampOf(abs string) (fileStamp, bool) {
	var st syscall.Stat_t
	if err := syscall.Lstat(abs, &st); err != nil {
		return fileStamp{}, false
	}
	return fileStamp{size: uint64(st.Size), ino: st.Ino, mtimeS: st.Mtim.Sec, mtimeN: st.Mtim.Nsec}, true
}

// mark records that rel (backing path abs) was just changed through the
// mount.
func (o *ownWrites) mark(abs, rel string) {
	st, ok := stampOf(abs)
	now := time.Now()
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.at == nil {
		o.at = map[string]ownMark{}
	}
	o.at[rel] = ownMark{at: now, st: st, gone: !ok}
	if now.Sub(o.sweep) > ownWindow {
		o.sweep = now
		for p, t := range o.at {
			if now.Sub(t.at) > ownWindow {
				delete(o.at, p)
			}
		}
	}
}

// ours reports whether the file at rel (backing path abs) is as a change
// through the mount left it a moment ago.
func (o *ownWrites) ours(abs, rel string) bool {
	o.mu.Lock()
	t, ok := o.at[rel]
	o.mu.Unlock()
	if !ok || time.Since(t.at) > ownWindow {
		return false
	}
	st, exists := stampOf(abs)
	if !exists {
		return t.gone
	}
	return !t.gone && st == t.st
}
