package harness

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/mindmount/mindmount/consolidate"
	"github.com/mindmount/mindmount/memgraph"
)

// StateDir holds the copy state of each session, inside the memory but
// outside git and outside the tracker's view (.mindmount/cache is both).
const StateDir = memgraph.StateDir + "/cache/hooks"

// DefaultMaxRead bounds how much of a JSONL transcript one call reads
// (CopyOptions.MaxRead; the hook_read_mib setting): the next call goes on
// from there, so a hook never runs away with time or memory.
const DefaultMaxRead = 8 << 20

// MaxTranscript bounds a whole-file JSON transcript (read whole on every
// call, as it is rewritten whole) and what is read of the destination.
const MaxTranscript = 64 << 20

// tailLen is how many bytes before the copied offset are fingerprinted to
// notice a transcript that was rewritten rather than appended to.
const tailLen = 64

// copyState is what a session's previous calls copied.
type copyState struct {
	Source  string `json:"source"`
	Offset  int64  `json:"offset"`  // JSONL: bytes of the source consumed (whole lines)
	Tail    string `json:"tail"`    // JSONL: sha256 of the tailLen bytes before Offset
	Records int    `json:"records"` // whole-file JSON: records consumed
}

// CopyOptions says what to copy where.
type CopyOptions struct {
	Memory    string // the memory: a repository or a mount of one
	Harness   string // a name from Harnesses
	SessionID string // from the payload; confined by SessionName
	Source    string // the harness's transcript_path
	// Redact cleans a message before it is written (the transcript rule:
	// secrets never reach the memory). Nil writes the text as is.
	Redact func(string) string
	// MaxRead bounds the bytes of a JSONL transcript read by one call
	// (0: the memory's hook_read_mib setting, else DefaultMaxRead).
	MaxRead int64
}

// Copy appends the turns of the harness transcript added since the last
// call for the same session to transcripts/<harness>-<session>.jsonl of
// the memory, as chat JSONL, and returns how many messages it appended.
// Calls for one session are serialized by a lock on the session's state
// file, so two hooks firing at once copy each line once. A transcript that
// shrank or changed under the copied part is read again from the start,
// skipping every message the destination already holds.
func Copy(o CopyOptions) (int, error) {
	if !KnownHarness(o.Harness) {
		return 0, fmt.Errorf("unknown harness %q", o.Harness)
	}
	if o.SessionID == "" {
		return 0, errors.New("payload has no session_id")
	}
	if o.Source == "" {
		return 0, errors.New("payload has no transcript_path")
	}
	rel := TranscriptRel(o.Harness, o.SessionID)
	stateRel := path.Join(StateDir, strings.TrimSuffix(path.Base(rel), ".jsonl")+".state")

	lock, err := openBeneath(o.Memory, stateRel+".lock", os.O_RDWR|os.O_CREATE, 0o600, true)
	if err != nil {
		return 0, err
	}
	defer lock.Close()
	if err := unix.Flock(int(lock.Fd()), unix.LOCK_EX); err != nil {
		return 0, fmt.Errorf("lock %s: %w", stateRel, err)
	}
	defer unix.Flock(int(lock.Fd()), unix.LOCK_UN)

	st := readState(o.Memory, stateRel)
	// O_NONBLOCK: a FIFO (or a device) named as the transcript must not
	// hang the hook, and through the lock every later hook of the
	// session; it is refused below as not a regular file.
	src, err := os.OpenFile(o.Source, os.O_RDONLY|unix.O_NONBLOCK|unix.O_NOCTTY, 0)
	if err != nil {
		return 0, fmt.Errorf("transcript: %w", err)
	}
	defer src.Close()
	fi, err := src.Stat()
	if err != nil {
		return 0, fmt.Errorf("transcript: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return 0, fmt.Errorf("transcript %s is not a regular file", o.Source)
	}
	if st.Source != o.Source {
		st = copyState{Source: o.Source}
	}

	// A session with no state (the first call, or a cleared cache) may
	// still have a destination from earlier calls: check it like a reread.
	fresh := st.Offset == 0 && st.Records == 0
	maxRead := o.MaxRead
	if maxRead <= 0 {
		maxRead = readLimit(o.Memory)
	}
	if maxRead <= 0 {
		maxRead = DefaultMaxRead
	}
	msgs, next, reread, err := newMessages(src, fi.Size(), st, maxRead)
	if err != nil {
		return 0, err
	}
	lines := redact(msgs, o.Redact)
	if (reread || fresh) && len(lines) > 0 {
		lines = dropPresent(o.Memory, rel, lines)
	}
	n := len(lines)
	if n > 0 {
		if err := consolidate.AppendTranscript(o.Memory, rel, lines...); err != nil {
			return 0, err
		}
	}
	// The state moves only after the lines are written: a crash between
	// the two re-reads them next time, and the tail check plus dropPresent
	// keep that from duplicating anything.
	if err := writeState(o.Memory, stateRel, next); err != nil {
		return n, err
	}
	return n, nil
}

// newMessages reads what is new in src since st and returns the messages,
// the state after them, and whether src had to be read from the start.
func newMessages(src *os.File, size int64, st copyState, maxRead int64) ([]consolidate.Line, copyState, bool, error) {
	if looksLikeDocument(src, size) {
		// One JSON document (Gemini CLI's session file), rewritten whole.
		if size > MaxTranscript {
			return nil, st, false, fmt.Errorf("transcript larger than %d MiB", MaxTranscript>>20)
		}
		data, err := io.ReadAll(io.NewSectionReader(src, 0, size))
		if err != nil {
			return nil, st, false, err
		}
		if recs, ok := ParseDocument(data); ok {
			reread := false
			if st.Records > len(recs) || st.Offset != 0 {
				st, reread = copyState{Source: st.Source}, true
			}
			var msgs []consolidate.Line
			for _, r := range recs[st.Records:] {
				if m, ok := ConvertLine(r); ok {
					msgs = append(msgs, m)
				}
			}
			st.Records = len(recs)
			return msgs, st, reread, nil
		}
	}
	reread := false
	if st.Records != 0 || st.Offset > size || (st.Offset > 0 && tailOf(src, st.Offset) != st.Tail) {
		st, reread = copyState{Source: st.Source}, true
	}
	// At most maxRead bytes a call; the next call goes on from there.
	data, err := io.ReadAll(io.NewSectionReader(src, st.Offset, min(size-st.Offset, maxRead)))
	if err != nil {
		return nil, st, false, err
	}
	// Only whole lines: the harness may be mid-write on the last one. A
	// read that filled its bound without a newline is one line longer than
	// the bound: it is passed over (split, each piece unreadable as a
	// message), so the offset always moves and no call repeats the work.
	end := bytes.LastIndexByte(data, '\n') + 1
	if end == 0 && int64(len(data)) == maxRead {
		end = len(data)
	}
	var msgs []consolidate.Line
	sc := bufio.NewScanner(bytes.NewReader(data[:end]))
	sc.Buffer(make([]byte, 64<<10), int(maxRead)+1)
	for sc.Scan() {
		if m, ok := ConvertLine(sc.Bytes()); ok {
			msgs = append(msgs, m)
		}
	}
	st.Offset += int64(end)
	st.Tail = tailOf(src, st.Offset)
	return msgs, st, reread, nil
}

// looksLikeDocument tells a whole-file JSON transcript from JSONL by its
// first line: in JSONL it is a JSON value by itself and not a document; a
// pretty-printed document's first line is a lone "{". Only the first line
// is read (at most 1 MiB), so a long JSONL transcript is not read whole.
func looksLikeDocument(src *os.File, size int64) bool {
	r := bufio.NewReader(io.NewSectionReader(src, 0, min(size, 1<<20)))
	first, err := r.ReadBytes('\n')
	first = bytes.TrimSpace(first)
	if len(first) == 0 || first[0] != '{' {
		return false
	}
	if json.Valid(first) {
		_, doc := ParseDocument(first)
		return doc
	}
	return err == nil || size <= 1<<20 // a cut line of a huge JSONL file is not a document
}

func tailOf(f *os.File, off int64) string {
	start := max(off-tailLen, 0)
	b := make([]byte, off-start)
	if _, err := f.ReadAt(b, start); err != nil && !errors.Is(err, io.EOF) {
		return ""
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// redact cleans each message's text (nil: as is).
func redact(msgs []consolidate.Line, clean func(string) string) []consolidate.Line {
	if clean == nil {
		return msgs
	}
	out := make([]consolidate.Line, len(msgs))
	for i, m := range msgs {
		m.Content = clean(m.Content)
		out[i] = m
	}
	return out
}

// dropPresent removes from lines those the destination already holds,
// compared as they would be written (consolidate.EncodeLines).
func dropPresent(mem, rel string, lines []consolidate.Line) []consolidate.Line {
	f, err := openBeneath(mem, rel, os.O_RDONLY, 0, false)
	if err != nil {
		return lines
	}
	defer f.Close()
	have := map[string]bool{}
	sc := bufio.NewScanner(io.LimitReader(f, MaxTranscript))
	sc.Buffer(make([]byte, 64<<10), MaxTranscript)
	for sc.Scan() {
		have[sc.Text()] = true
	}
	var kept []consolidate.Line
	for _, l := range lines {
		if !have[strings.TrimSuffix(string(consolidate.EncodeLines(l)), "\n")] {
			kept = append(kept, l)
		}
	}
	return kept
}

func readState(mem, rel string) copyState {
	var st copyState
	f, err := openBeneath(mem, rel, os.O_RDONLY, 0, false)
	if err != nil {
		return st
	}
	defer f.Close()
	b, _ := io.ReadAll(io.LimitReader(f, 4096))
	if json.Unmarshal(b, &st) != nil {
		return copyState{}
	}
	return st
}

func writeState(mem, rel string, st copyState) error {
	b, _ := json.Marshal(st)
	f, err := openBeneath(mem, rel, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600, true)
	if err != nil {
		return err
	}
	if _, err := f.Write(append(b, '\n')); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
