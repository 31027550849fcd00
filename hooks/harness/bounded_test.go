package harness

import (
	"bytes"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestCopyFIFODoesNotHang (issue 23, item 8): a FIFO named as the
// transcript is refused at once, and the session's next hook still runs
// (the lock was not held by a hung call).
func TestCopyFIFODoesNotHang(t *testing.T) {
	mem, src := newMemory(t)
	fifo := filepath.Join(t.TempDir(), "fifo.jsonl")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := Copy(CopyOptions{Memory: mem, Harness: ClaudeCode, SessionID: session, Source: fifo})
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("a FIFO was accepted as a transcript")
		}
	case <-time.After(10 * time.Second):
		// Unblock the hung open so the goroutine ends, then fail.
		if w, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			w.Close()
		}
		t.Fatal("Copy hangs on a FIFO")
	}
	appendFile(t, src, mustRead(t, "testdata/claude-code/transcript.jsonl"))
	if n := copyOnce(t, mem, src); n != 3 {
		t.Fatalf("the next hook copied %d messages, want 3", n)
	}
}

// TestCopyBoundedRead (issue 23, item 8): one call reads at most MaxRead
// bytes; a line longer than that (a file with no newline at all) is passed
// over in pieces, the offset moving every call, and the messages after it
// are copied.
func TestCopyBoundedRead(t *testing.T) {
	mem, src := newMemory(t)
	const limit = 64 << 10
	appendFile(t, src, bytes.Repeat([]byte("x"), 3*limit+100))
	appendFile(t, src, []byte("\n"))
	appendFile(t, src, mustRead(t, "testdata/claude-code/transcript.jsonl"))
	var offsets []int64
	total := 0
	for i := 0; i < 10; i++ {
		n, err := Copy(CopyOptions{Memory: mem, Harness: ClaudeCode, SessionID: session, Source: src, MaxRead: limit})
		if err != nil {
			t.Fatal(err)
		}
		total += n
		st := readState(mem, filepath.ToSlash(filepath.Join(StateDir, "claude-code-"+session+".state")))
		offsets = append(offsets, st.Offset)
		if i > 0 && st.Offset-offsets[i-1] > limit {
			t.Fatalf("call %d read %d bytes, more than %d", i, st.Offset-offsets[i-1], limit)
		}
		if total == 3 {
			break
		}
	}
	if total != 3 {
		t.Fatalf("copied %d messages after the overlong line, want 3 (offsets %v)", total, offsets)
	}
	for i := 1; i < len(offsets)-1; i++ {
		if offsets[i] <= offsets[i-1] {
			t.Fatalf("the offset did not move: %v", offsets)
		}
	}
	fi, err := os.Stat(filepath.Join(mem, filepath.FromSlash(TranscriptRel(ClaudeCode, session))))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("the memory's transcript is %v, want 0600 (%v)", fi.Mode().Perm(), err)
	}
}
