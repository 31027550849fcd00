package tracker

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/mindmount/mindmount/memgraph"
)

// IsInbox reports whether rel is in the transcripts/ inbox. Transcripts
// hold private talk and never reach git: the tracker
// never commits such a path — whatever .gitignore says, so repositories
// made before the template ignored the folder are covered — but tells its
// subscribers it changed, which is how the consolidator hears of new
// transcripts. The folder's placeholder (.gitkeep) is the one exception.
func IsInbox(rel string) bool {
	rest, ok := strings.CutPrefix(rel, memgraph.TranscriptsDir+"/")
	return ok && rest != ".gitkeep"
}

// InboxRename says why renaming oldRel to newRel may not happen, or nil:
// the inbox folder keeps its name. Moved away, its transcripts would be
// ordinary files, committed; a folder moved in its place would take its
// committed files out of the rule's reach. Files still move in and out of
// it one by one.
func InboxRename(oldRel, newRel string) error {
	if oldRel == memgraph.TranscriptsDir || newRel == memgraph.TranscriptsDir {
		return fmt.Errorf("%w: the folder keeps its name (move the files, not the folder)", ErrInbox)
	}
	return nil
}

// inboxStamp is what a transcript looked like when subscribers last heard
// of it.
type inboxStamp struct {
	size int64
	mod  time.Time
}

// inboxNews reports whether subscribers should hear of the transcript rel:
// it holds something, and it is not as it was when they last heard of it.
// fsnotify reports one append as several events that may fall into two
// bursts (a create, then a write); the consolidator must hear of one chat
// once. A transcript that is gone is forgotten, and news when it returns.
func (t *Tracker) inboxNews(rel string) bool {
	fi, err := os.Lstat(filepath.Join(t.root, filepath.FromSlash(rel)))
	t.inboxMu.Lock()
	defer t.inboxMu.Unlock()
	if err != nil || !fi.Mode().IsRegular() {
		delete(t.inboxSeen, rel)
		return err != nil // a removal is still news, as before
	}
	if fi.Size() == 0 {
		return false // created, not yet written: the write will be reported
	}
	stamp := inboxStamp{size: fi.Size(), mod: fi.ModTime()}
	if old, ok := t.inboxSeen[rel]; ok && old == stamp {
		return false
	}
	if t.inboxSeen == nil {
		t.inboxSeen = map[string]inboxStamp{}
	}
	t.inboxSeen[rel] = stamp
	return true
}
