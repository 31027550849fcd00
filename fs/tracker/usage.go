package tracker

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"sync"

	"github.com/mindmount/mindmount/memgraph/subtree"
)

// The size limit of the work tree: the operator's tree_limit_mib
// (memgraph.Operator.TreeLimit, 1 GiB by default), counted over every file
// of the work tree but .git and .mindmount (the daemon's own). A write that
// would take the tree past it is refused before it lands: ENOSPC at the
// mount, 507 over HTTP, a tool error over MCP.
//
// The count is kept cheap: one walk the first time a write asks (and again
// after a rescan, when events may have been lost), then a running total of
// the size each file was last seen at. Every door keeps it current: the
// mount reports its writes, truncations, removals and renames (Grow,
// Truncate, Removed, Moved), and the tracker's own watch records the size
// of every path an event names, so writes beside the mount (consolidation,
// a sync, an editor in watch mode) count too. Sizes are apparent sizes: a
// sparse file counts whole, as git would store it.

// ErrTreeFull is the refusal of a write that would take the work tree past
// its size limit; the error that carries it is a *TreeFullError.
var ErrTreeFull = errors.New("the memory tree is at its size limit")

// TreeFullError says how full the tree is and what the limit is.
type TreeFullError struct {
	Limit int64 // bytes
	Used  int64 // bytes, before the refused write
	Want  int64 // bytes the write would add
}

func (e *TreeFullError) Error() string {
	return fmt.Sprintf("%v: %s used of its %s limit (tree_limit_mib in the operator's configuration), %s more refused; delete something to make room",
		ErrTreeFull, mib(e.Used), mib(e.Limit), mib(e.Want))
}

func (e *TreeFullError) Unwrap() error { return ErrTreeFull }

// mib renders n bytes in MiB with one decimal.
func mib(n int64) string {
	return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
}

// usage is the running total of the work tree's size.
type usage struct {
	mu    sync.Mutex
	fresh bool             // sizes came from a walk and events since
	sizes map[string]int64 // rel -> size of a regular file last seen
	total int64
}

// counted says whether rel counts towards the limit.
func counted(rel string) bool {
	for _, skip := range []string{".git", ".mindmount"} {
		if rel == skip || strings.HasPrefix(rel, skip+"/") {
			return false
		}
	}
	return rel != "" && rel != "."
}

// walk recounts the tree (under u.mu).
func (u *usage) walk(tree *subtree.Tree) {
	u.sizes, u.total = map[string]int64{}, 0
	tree.WalkDir(".", func(rel string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() {
			if rel != "." && !counted(rel) {
				return fs.SkipDir
			}
			return nil
		}
		if !counted(rel) || !d.Type().IsRegular() {
			return nil
		}
		if fi, err := d.Info(); err == nil {
			u.sizes[rel] = fi.Size()
			u.total += fi.Size()
		}
		return nil
	})
	u.fresh = true
}

// setLocked records rel at size (0: gone).
func (u *usage) setLocked(rel string, size int64) {
	u.total += size - u.sizes[rel]
	if size > 0 {
		u.sizes[rel] = size
	} else {
		delete(u.sizes, rel)
	}
}

// treeLimit is the limit in bytes (0: none).
func (t *Tracker) treeLimit() int64 {
	o, _ := t.cfg.Operator.Get()
	return o.TreeLimit()
}

// usageLocked returns the usage with its count made, locked; the caller unlocks.
func (t *Tracker) usageLocked() *usage {
	u := &t.usage
	u.mu.Lock()
	if !u.fresh {
		u.walk(t.r.Tree())
	}
	return u
}

// Grow is the size rule for a write that leaves rel at least end bytes
// long: nil (and end recorded) when the tree stays within its limit, else
// a *TreeFullError. A write inside the file's current size always passes.
func (t *Tracker) Grow(rel string, end int64) error {
	return t.resize(rel, end, false)
}

// Truncate is the size rule for setting rel's size (a truncate, O_TRUNC,
// a whole new content): a shrink always passes.
func (t *Tracker) Truncate(rel string, size int64) error {
	return t.resize(rel, size, true)
}

// AppendRoom is the size rule for appending n bytes to rel.
func (t *Tracker) AppendRoom(rel string, n int64) error {
	if n <= 0 {
		return nil
	}
	return t.withRoom(rel, func(u *usage, limit int64) error {
		return u.growLocked(rel, u.sizes[rel]+n, false, limit)
	})
}

// Room is the size rule asked before appending n bytes to rel by a door
// that writes beside the mount (HTTP's transcripts): it records nothing,
// the watch sees the write itself.
func (t *Tracker) Room(rel string, n int64) error {
	if n <= 0 {
		return nil
	}
	return t.withRoom(rel, func(u *usage, limit int64) error {
		return u.roomLocked(rel, u.sizes[rel]+n, limit)
	})
}

// withRoom runs check under the usage lock with the tree's limit, for a
// counted path under a limit; anything else passes.
func (t *Tracker) withRoom(rel string, check func(u *usage, limit int64) error) error {
	if !counted(rel) {
		return nil
	}
	limit := t.treeLimit()
	if limit <= 0 {
		return nil
	}
	u := t.usageLocked()
	defer u.mu.Unlock()
	return check(u, limit)
}

func (t *Tracker) resize(rel string, size int64, set bool) error {
	return t.withRoom(rel, func(u *usage, limit int64) error {
		return u.growLocked(rel, size, set, limit)
	})
}

func (u *usage) growLocked(rel string, size int64, set bool, limit int64) error {
	if err := u.roomLocked(rel, size, limit); err != nil {
		return err
	}
	if set || size > u.sizes[rel] {
		u.setLocked(rel, size)
	}
	return nil
}

// roomLocked is the rule: rel may become size bytes long when that does
// not grow it or the tree stays within limit (0: none).
func (u *usage) roomLocked(rel string, size, limit int64) error {
	cur := u.sizes[rel]
	if size <= cur || limit <= 0 || u.total-cur+size <= limit {
		return nil
	}
	return &TreeFullError{Limit: limit, Used: u.total, Want: size - cur}
}

// sizeRoom is the size rule asked before content of size bytes replaces
// rel (Ask): it records nothing, the write's own report does.
func (t *Tracker) sizeRoom(rel string, size int64) error {
	return t.withRoom(rel, func(u *usage, limit int64) error {
		return u.roomLocked(rel, size, limit)
	})
}

// Removed records that rel (a file or a folder) is gone.
func (t *Tracker) Removed(rel string) {
	u := &t.usage
	u.mu.Lock()
	defer u.mu.Unlock()
	if !u.fresh {
		return
	}
	u.setLocked(rel, 0)
	prefix := rel + "/"
	for k := range u.sizes {
		if strings.HasPrefix(k, prefix) {
			u.setLocked(k, 0)
		}
	}
}

// Moved records a rename of old (a file or a folder) to new, replacing
// whatever new was.
func (t *Tracker) Moved(old, new string) {
	u := &t.usage
	u.mu.Lock()
	defer u.mu.Unlock()
	if !u.fresh {
		return
	}
	if size, isFile := u.sizes[old]; isFile {
		// A file (an editor's save): no scan of the others.
		u.setLocked(old, 0)
		if counted(new) {
			u.setLocked(new, size)
		} else {
			u.setLocked(new, 0)
		}
		return
	}
	moved := map[string]int64{}
	for k, v := range u.sizes {
		if k == old || strings.HasPrefix(k, old+"/") {
			moved[new+strings.TrimPrefix(k, old)] = v
			u.setLocked(k, 0)
		} else if k == new || strings.HasPrefix(k, new+"/") {
			u.setLocked(k, 0)
		}
	}
	for k, v := range moved {
		if counted(k) {
			u.setLocked(k, v)
		}
	}
}

// Exchanged records that a and b swapped places (RENAME_EXCHANGE): the
// next write that asks counts the tree again.
func (t *Tracker) Exchanged(a, b string) {
	t.recount()
}

// sawPath records rel's size as the disk has it now (an event of the
// watch, a path a Write reported).
func (t *Tracker) sawPath(rel string) {
	if !counted(rel) {
		return
	}
	u := &t.usage
	u.mu.Lock()
	defer u.mu.Unlock()
	if !u.fresh {
		return
	}
	var size int64
	if fi, err := t.r.Tree().Lstat(rel); err == nil && fi.Mode().IsRegular() {
		size = fi.Size()
	} else if err == nil && fi.IsDir() {
		return // a folder's files have their own events (or a rescan)
	}
	u.setLocked(rel, size)
}

// recount drops the running total: the next write that asks walks the
// tree again (after a rescan, when events may have been lost).
func (t *Tracker) recount() {
	t.usage.mu.Lock()
	t.usage.fresh = false
	t.usage.mu.Unlock()
}

// TreeUsage returns the bytes the work tree holds (as last counted) and
// its limit (0: none).
func (t *Tracker) TreeUsage() (used, limit int64) {
	limit = t.treeLimit()
	u := t.usageLocked()
	defer u.mu.Unlock()
	return u.total, limit
}
