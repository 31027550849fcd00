package consolidate

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path"

	"github.com/mindmount/mindmount/fs/tracker"
	"github.com/mindmount/mindmount/memgraph/subtree"
)

// Line is one message of a transcript as mindmount writes it, a line of
// chat JSONL: {"role":"user","content":"...","time":"...","cut":true}. It
// is the one transcript line type: the HTTP chat and the harness hooks
// write it (AppendTranscript), ParseTranscript reads it (and the other
// shapes harnesses write). Time (RFC 3339) and Cut (an answer the client
// did not receive whole) are left out when empty.
type Line struct {
	Role    Role   `json:"role"`
	Content string `json:"content"`
	Time    string `json:"time,omitempty"`
	Cut     bool   `json:"cut,omitempty"`
}

// EncodeLines renders lines as chat JSONL, one line each, newline-ended.
// json.Marshal escapes every newline of a message, so one message is one
// line and a reader never sees half of one.
func EncodeLines(lines ...Line) []byte {
	var b bytes.Buffer
	for _, l := range lines {
		j, err := json.Marshal(l)
		if err != nil {
			continue // a Line of strings always marshals
		}
		b.Write(j)
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// ErrNotInbox is AppendTranscript's refusal of a path outside the inbox
// (tracker.IsInbox): a transcript is private talk and must never land
// where the tracker commits.
var ErrNotInbox = errors.New("a transcript is written in transcripts/ only")

// AppendTranscript appends lines to the transcript rel (in the inbox,
// transcripts/) of the repository or mount at dir, in one write, and syncs
// it: O_APPEND keeps a concurrent writer's lines whole. The file and its
// folders are created private (0600, 0700; a file made 0644 by an older
// version is narrowed), and every path is opened beneath dir without
// following a symbolic link: a link planted at transcripts/ or at the file
// is refused, never appended through.
//
// The sync is for a writer that records how far it got (the harness copy
// moves its cursor next, a client of /v1/consolidate is told its
// conversation is kept): the lines must be on disk before that.
func AppendTranscript(dir, rel string, lines ...Line) error {
	return appendTranscript(dir, rel, true, lines)
}

// AppendTranscriptNoSync is AppendTranscript without the sync, for the
// chat front: it records no cursor, and a sync per chat cost more than
// everything else mindmount does for the request (3 ms against 0.4 ms at
// 10,000 memories, BenchmarkChat10k/prompt) and queues every user's
// commits behind one user's chats in the file system's journal. A daemon
// crash loses nothing (the lines are in the page cache); a power cut may
// lose the last chats of a conversation before it was consolidated.
func AppendTranscriptNoSync(dir, rel string, lines ...Line) error {
	return appendTranscript(dir, rel, false, lines)
}

func appendTranscript(dir, rel string, sync bool, lines []Line) error {
	if !tracker.IsInbox(rel) {
		return fmt.Errorf("%w: %s", ErrNotInbox, rel)
	}
	data := EncodeLines(lines...)
	if len(data) == 0 {
		return nil
	}
	t, err := subtree.Open(dir)
	if err != nil {
		return err
	}
	defer t.Close()
	if err := t.MkdirAll(path.Dir(rel), 0o700); err != nil {
		return err
	}
	f, err := t.OpenFile(rel, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	if fi, err := f.Stat(); err == nil && fi.Mode().Perm()&0o077 != 0 {
		f.Chmod(0o600)
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if sync {
		if err := f.Sync(); err != nil {
			f.Close()
			return err
		}
	}
	return f.Close()
}
