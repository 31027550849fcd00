package consolidate

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"time"
)

// The transcripts rule. Transcripts hold private talk
// and never reach git:
//
//   - transcripts/ is a local inbox: the template's .gitignore ignores it
//     and the change tracker never commits a path under it, whatever
//     .gitignore says (tracker.IsInbox), so older repositories are covered.
//   - The consolidator reads transcripts from the work tree and records
//     where a commit's memories came from as trailers — path, message
//     range, line range and a hash of those lines — never their text.
//   - A transcript whose every message is consolidated is deleted from the
//     inbox once it has not changed for Config.Retention, or the
//     repository setting transcript_retention (memgraph.Settings).

// DefaultRetention is how long a consolidated transcript stays in the inbox.
const DefaultRetention = 30 * 24 * time.Hour

// Provenance names messages [lo, hi) of t by path, file lines and the
// SHA-256 of those lines' bytes: enough to find and verify the source in a
// local inbox or a backup, without storing a word of it.
func (t *Transcript) Provenance(lo, hi int) string {
	if lo >= hi || hi > len(t.Messages) {
		return t.Path
	}
	first := t.Messages[lo].Line
	var last int
	if hi < len(t.Messages) {
		last = t.Messages[hi].Line - 1
	} else {
		last = bytes.Count(t.data, []byte("\n"))
		if len(t.data) > 0 && t.data[len(t.data)-1] != '\n' && !t.Partial {
			last++ // a last line without its newline still counts
		}
	}
	if last < first {
		last = first
	}
	sum := sha256.Sum256(lineRange(t.data, first, last))
	return fmt.Sprintf("%s lines %d-%d sha256:%s", t.Path, first, last, hex.EncodeToString(sum[:]))
}

// lineRange returns lines first..last (1-based, inclusive) of data with
// their newlines.
func lineRange(data []byte, first, last int) []byte {
	start, line := 0, 1
	for line < first && start < len(data) {
		i := bytes.IndexByte(data[start:], '\n')
		if i < 0 {
			return nil
		}
		start += i + 1
		line++
	}
	end := start
	for line <= last && end < len(data) {
		i := bytes.IndexByte(data[end:], '\n')
		if i < 0 {
			end = len(data)
			break
		}
		end += i + 1
		line++
	}
	return data[start:end]
}

// expire deletes the transcripts whose every message cur accounts for and
// that have not changed for cfg.Retention. A transcript git still tracks
// (a repository from before the rule) is left alone: deleting it would
// leave a change the tracker never commits.
func (c *Consolidator) expire(paths []string, cur *Cursor) {
	keep := c.cfg.Retention
	if s, _ := c.g.Settings(); s.TranscriptRetention != 0 {
		keep = s.TranscriptRetention // the repository's settings file wins
	}
	if keep < 0 {
		return
	}
	cutoff := c.cfg.Now().Add(-keep)
	tree := c.r.Tree()
	for _, rel := range paths {
		st, err := tree.Lstat(rel)
		if err != nil || !st.Mode().IsRegular() || st.ModTime().After(cutoff) || st.Size() > MaxTranscriptSize {
			continue
		}
		data, err := tree.ReadFile(rel, MaxTranscriptSize)
		if err != nil {
			continue
		}
		t := ParseTranscript(rel, data)
		if start, _ := cur.Start(t); t.Partial || start < len(t.Messages) || len(t.Problems) > 0 && len(t.Messages) == 0 {
			continue // not (fully) consolidated: keep it
		}
		if _, tracked, err := c.r.ReadHead(rel); err != nil || tracked {
			continue
		}
		if err := tree.Remove(rel); err != nil && !errors.Is(err, fs.ErrNotExist) {
			c.log.Warn("cannot remove an expired transcript", "transcript", rel, "err", err)
			continue
		}
		c.mu.Lock()
		delete(c.done, rel)
		delete(c.pending, rel)
		c.mu.Unlock()
		c.log.Info("removed a consolidated transcript after its retention", "transcript", rel, "retention", keep)
	}
}
