package tracker

import (
	"path"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/mindmount/mindmount/memgraph"
)

// The inbox renamed beside the mount. The mount refuses to rename the
// inbox folder (InboxRename); watch mode, where a person's shell writes
// the tree itself, cannot refuse "mv transcripts transcripts.real". The
// tracker remembers the inbox folder by its identity (device and inode)
// while it runs: a folder with that identity under another name is the
// inbox renamed. The watch moves it back at once (renameat2 with
// RENAME_NOREPLACE), and until then the flush treats every path inside it
// as the inbox's: never committed. A new folder named transcripts becomes
// the inbox remembered; the inbox removed is forgotten, so a later folder
// that reuses its inode is an ordinary one.

// dirID is a folder's identity.
type dirID struct{ dev, ino uint64 }

// idOf returns rel's identity when it is a folder (no link followed).
func (t *Tracker) idOf(rel string) (dirID, bool) {
	var st unix.Stat_t
	if err := unix.Fstatat(t.r.Tree().Fd(), rel, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil || st.Mode&syscall.S_IFMT != syscall.S_IFDIR {
		return dirID{}, false
	}
	return dirID{uint64(st.Dev), st.Ino}, true
}

// noteInbox remembers the inbox folder as it is now (none: forgotten).
func (t *Tracker) noteInbox() {
	id, ok := t.idOf(memgraph.TranscriptsDir)
	t.inboxMu.Lock()
	t.inboxID, t.inboxKnown = id, ok
	t.inboxMu.Unlock()
}

// renamedInbox returns the folder holding rel (or rel itself) that is the
// inbox under another name, if any.
func (t *Tracker) renamedInbox(rel string) (string, bool) {
	t.inboxMu.Lock()
	id, known := t.inboxID, t.inboxKnown
	t.inboxMu.Unlock()
	if !known {
		return "", false
	}
	for dir := rel; dir != "." && dir != "" && dir != "/"; dir = path.Dir(dir) {
		if dir == memgraph.TranscriptsDir || strings.Contains(dir, "\x00") {
			continue
		}
		if got, ok := t.idOf(dir); ok && got == id {
			return dir, true
		}
	}
	return "", false
}

// restoreInbox moves the inbox, found renamed to dir, back to its name.
func (t *Tracker) restoreInbox(dir string) {
	err := t.r.Tree().Rename(dir, memgraph.TranscriptsDir, unix.RENAME_NOREPLACE)
	if err != nil {
		t.log.Warn("the inbox folder was renamed and cannot be moved back; its files are not committed", "folder", safePath(dir), "err", err)
		return
	}
	t.log.Warn("the inbox folder was renamed; moved back (transcripts are never committed, whatever the folder is called)", "folder", safePath(dir))
}
