package tracker

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/mindmount/mindmount/memgraph"
	"github.com/mindmount/mindmount/memgraph/subtree"
)

// Run watches the backing tree and commits debounced bursts until ctx is
// done. It does not flush on return: call Flush at shutdown. Changes seen
// through fsnotify are touched with no writer (authored "editor" unless the
// mount claimed them); a HEAD moved by someone else reloads the changed
// paths into the graph.
func (t *Tracker) Run(ctx context.Context) error {
	if err := t.claim(); err != nil {
		return err
	}
	w, err := fsnotify.NewBufferedWatcher(4096)
	if err != nil {
		return fmt.Errorf("start file watcher: %w", err)
	}
	defer w.Close()
	ws := &watchState{t: t, w: w, dirs: map[string]bool{}}
	if err := ws.start(); err != nil {
		return err
	}

	t.mu.Lock()
	// Settle's barrier needs the .git watch.
	t.running, t.watching = true, ws.gitDir != ""
	t.mu.Unlock()
	defer func() {
		t.mu.Lock()
		t.running, t.watching = false, false
		for name, ch := range t.barriers {
			close(ch)
			delete(t.barriers, name)
		}
		t.mu.Unlock()
	}()
	t.once.Do(func() { close(t.ready) })

	var rescan <-chan time.Time
	if t.cfg.Rescan > 0 {
		tk := time.NewTicker(t.cfg.Rescan)
		defer tk.Stop()
		rescan = tk.C
	}
	// Commits run on their own goroutine: a slow commit must not hold up
	// the events of the next burst, or that burst's first write would be
	// noticed late and committed up to one commit later than MaxWait.
	cctx, stopCommits := context.WithCancel(ctx)
	committed := make(chan struct{})
	go func() {
		defer close(committed)
		t.commitLoop(cctx)
	}()
	packed := make(chan struct{})
	go func() {
		defer close(packed)
		t.packLoop(cctx)
	}()
	defer func() {
		stopCommits()
		<-committed
		<-packed
	}()
	t.poke() // changes touched before Run get their timer
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev, ok := <-w.Events:
			if !ok {
				return errors.New("file watcher closed")
			}
			ws.handle(ev)
		case err, ok := <-w.Errors:
			if !ok {
				return errors.New("file watcher closed")
			}
			if errors.Is(err, fsnotify.ErrEventOverflow) {
				t.log.Warn("file watcher overflowed; rescanning the repository")
			} else {
				t.log.Warn("file watcher error; rescanning the repository", "err", err)
			}
			t.rescan()
		case <-rescan:
			t.rescan()
		}
	}
}

// commitLoop flushes each burst when it is due (see due) until ctx ends.
func (t *Tracker) commitLoop(ctx context.Context) {
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.kick:
			if d, ok := t.due(); ok {
				timer.Reset(d)
			}
		case <-timer.C:
			if d, ok := t.due(); ok && d > 0 {
				timer.Reset(d)
				continue
			}
			if err := t.Flush(ctx); err != nil && ctx.Err() == nil {
				// requeue poked us: the retry waits one debounce.
				t.log.Debug("flush failed", "err", err)
			}
		}
	}
}

// due returns how long until the pending burst should be committed: a
// Debounce of quiet, but never later than MaxWait after its first change.
func (t *Tracker) due() (time.Duration, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.pending) == 0 {
		return 0, false
	}
	at := t.last.Add(t.cfg.Debounce)
	if lim := t.first.Add(t.cfg.MaxWait); lim.Before(at) {
		at = lim
	}
	return time.Until(at), true
}

// rescan touches what differs from HEAD: the safety net for events fsnotify
// lost. Invalid files whose content did not change are left alone so the
// scan does not re-log them.
func (t *Tracker) rescan() {
	t.recount()
	paths, err := t.r.Dirty()
	if err != nil {
		t.log.Warn("rescan failed", "err", err)
		return
	}
	for _, p := range paths {
		rel, ok := trackedRel(p)
		if !ok || IsScratch(rel) {
			continue
		}
		t.mu.Lock()
		inv, bad := t.invalid[rel]
		_, waiting := t.pending[rel]
		t.mu.Unlock()
		if waiting {
			// Touching it again would push the debounce out on
			// every scan.
			continue
		}
		if bad {
			data, tooLarge, err := readBounded(t.r.Tree(), rel)
			if err == nil && contentSum(data, tooLarge) == inv.sum {
				continue
			}
		}
		t.Touch(rel, "")
	}
}

// watchState is Run's view of the inotify watches.
type watchState struct {
	t      *Tracker
	w      *fsnotify.Watcher
	dirs   map[string]bool // watched directories, repo-relative ("" = root)
	gitDir string          // absolute .git directory, "" if not watched
}

// addTree watches dir and every directory below it, except .git and
// .mindmount/cache. With touch, files found are touched: they may have been
// written before the watch existed (mkdir -p a/b && echo > a/b/c).
func (ws *watchState) addTree(dir string, touch bool) error {
	root := ws.t.root
	start := relOf(root, dir)
	if start == "" {
		start = "."
	}
	// The walk goes beneath the root by descriptor and follows no link:
	// a folder swapped for a symlink to /etc while we walk is not
	// listed, so nothing outside is ever touched.
	return ws.t.r.Tree().WalkDir(start, func(rel string, d fs.DirEntry, err error) error {
		if err != nil {
			if rel == start && !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, subtree.ErrUnsafePath) {
				return err
			}
			return nil // vanished while we walked: its events say so
		}
		if rel == "." {
			rel = ""
		}
		if d.IsDir() {
			// Ignored folders are watched too: a file HEAD tracks stays
			// tracked under a matching pattern, as in git.
			if d.Name() == ".git" || rel == ".mindmount/cache" {
				return fs.SkipDir
			}
			if err := ws.w.Add(filepath.Join(root, filepath.FromSlash(rel))); err != nil {
				ws.t.log.Warn("cannot watch directory; the periodic rescan covers it", "dir", rel, "err", err)
				return nil
			}
			ws.dirs[rel] = true
			return nil
		}
		if touch {
			ws.t.Touch(rel, "")
		}
		return nil
	})
}

// start watches the tree and .git, and notes the inbox folder's identity
// (inboxalias.go).
func (ws *watchState) start() error {
	if err := ws.addTree(ws.t.root, false); err != nil {
		return err
	}
	ws.watchGit()
	ws.t.noteInbox()
	return nil
}

// watchGit watches the .git directory itself (HEAD, packed-refs and our
// settle markers live there) and the refs tree, to notice a HEAD moved by
// git commands in the backing repository. Objects are not watched.
func (ws *watchState) watchGit() {
	gitDir := filepath.Join(ws.t.root, ".git")
	if fi, err := os.Stat(gitDir); err != nil || !fi.IsDir() {
		ws.t.log.Warn(".git is not a directory; moved HEADs are noticed by the periodic rescan only")
		return
	}
	if err := ws.w.Add(gitDir); err != nil {
		ws.t.log.Warn("cannot watch .git", "err", err)
		return
	}
	ws.gitDir = gitDir
	ws.addRefs(filepath.Join(gitDir, "refs"))
}

func (ws *watchState) addRefs(dir string) {
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			if err := ws.w.Add(p); err != nil {
				ws.t.log.Debug("cannot watch refs directory", "dir", p, "err", err)
			}
		}
		return nil
	})
}

func (ws *watchState) handle(ev fsnotify.Event) {
	t := ws.t
	if ws.gitDir != "" && (ev.Name == ws.gitDir || strings.HasPrefix(ev.Name, ws.gitDir+string(filepath.Separator))) {
		ws.handleGit(ev)
		return
	}
	rel := relOf(t.root, ev.Name)
	if rel == "" || strings.HasPrefix(rel, "../") {
		return
	}
	if ev.Has(fsnotify.Create) {
		if fi, err := os.Lstat(ev.Name); err == nil && fi.IsDir() {
			if rel == memgraph.TranscriptsDir {
				t.noteInbox()
			} else if dir, ok := t.renamedInbox(rel); ok && dir == rel {
				t.restoreInbox(rel)
				return
			}
			if _, ok := trackedRel(rel); ok {
				if err := ws.addTree(ev.Name, true); err != nil {
					t.log.Warn("cannot watch new directory", "dir", rel, "err", err)
				}
			}
			return
		}
	}
	if ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename) {
		if ws.dirs[rel] {
			// A directory went away. Files removed one by one had
			// their own events, but a renamed directory's files had
			// none: find them by comparing with HEAD.
			for d := range ws.dirs {
				if d == rel || strings.HasPrefix(d, rel+"/") {
					delete(ws.dirs, d)
					ws.w.Remove(filepath.Join(t.root, filepath.FromSlash(d)))
				}
			}
			if ev.Has(fsnotify.Rename) {
				t.rescan()
			} else {
				t.Removed(rel)
				if rel == memgraph.TranscriptsDir {
					t.noteInbox() // removed: a folder reusing its inode is not it
				}
			}
			t.observed(rel)
			return
		}
	}
	t.observed(rel)
	t.sawPath(rel)
	if t.echo.report(t.r.Tree(), rel) {
		return // a file the tracker wrote itself (held until it is committed)
	}
	t.Touch(rel, "")
}

// handleGit reacts to changes inside .git: settle markers, new refs
// directories, and a possibly moved HEAD.
func (ws *watchState) handleGit(ev fsnotify.Event) {
	t := ws.t
	sub := filepath.ToSlash(strings.TrimPrefix(ev.Name, ws.gitDir+string(filepath.Separator)))
	if strings.HasPrefix(sub, settlePrefix) {
		t.mu.Lock()
		if ch, ok := t.barriers[sub]; ok {
			close(ch)
			delete(t.barriers, sub)
		}
		t.mu.Unlock()
		return
	}
	if !(sub == "HEAD" || sub == "packed-refs" || strings.HasPrefix(sub, "refs/")) {
		return
	}
	if strings.HasPrefix(sub, "refs/") && ev.Has(fsnotify.Create) {
		if fi, err := os.Stat(ev.Name); err == nil && fi.IsDir() {
			ws.addRefs(ev.Name)
		}
	}
	t.SyncHead()
}

const settlePrefix = "mindmount-settle-"

// barrier writes a marker file into .git and waits until the watcher
// reports it. inotify delivers the events of one instance in order, so
// every event queued before the marker has then been handled.
func (t *Tracker) barrier(ctx context.Context) error {
	gitDir := filepath.Join(t.root, ".git")
	t.mu.Lock()
	t.barrierN++
	name := fmt.Sprintf("%s%d-%d", settlePrefix, os.Getpid(), t.barrierN)
	ch := make(chan struct{})
	t.barriers[name] = ch
	t.mu.Unlock()
	p := filepath.Join(gitDir, name)
	if err := os.WriteFile(p, nil, 0o644); err != nil {
		t.mu.Lock()
		delete(t.barriers, name)
		t.mu.Unlock()
		return fmt.Errorf("settle: %w", err)
	}
	defer os.Remove(p)
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		t.mu.Lock()
		delete(t.barriers, name)
		t.mu.Unlock()
		return ctx.Err()
	}
}

func relOf(root, p string) string {
	rel, err := filepath.Rel(root, p)
	if err != nil || rel == "." {
		return ""
	}
	return filepath.ToSlash(rel)
}
