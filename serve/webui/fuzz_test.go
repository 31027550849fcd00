package webui

import (
	"strings"
	"testing"
	"time"
)

// FuzzParseLog: whatever git prints (or a message someone crafted), the
// parser never panics, and a record built from a message with no NUL (git
// refuses NUL in messages) comes back as exactly one commit with that
// subject: a message cannot forge a second record.
func FuzzParseLog(f *testing.F) {
	f.Add("consolidate transcripts/a.jsonl: 1 added\n\nMindmount-Model: x\n", "diff --git a/x b/x\n+y\n")
	f.Add("\x00\x00\x00", "")
	f.Add("subject\n\nbody\n\nKey: v\nOther: w", "@@ -1 +1 @@\n-a\n+b")
	f.Fuzz(func(t *testing.T, msg, patch string) {
		parseLog([]byte(msg))
		msg = strings.ReplaceAll(msg, "\x00", "")
		patch = strings.ReplaceAll(patch, "\x00", "")
		rec := "\x00" + strings.Repeat("a", 40) + "\x00\x00author\x001700000000\x00" + msg + "\x00" + patch
		cs := parseLog([]byte(rec))
		if len(cs) != 1 {
			t.Fatalf("%d commits from one record", len(cs))
		}
		subject, _, _ := strings.Cut(strings.TrimRight(msg, "\n"), "\n")
		if cs[0].Subject != subject || !cs[0].When.Equal(time.Unix(1700000000, 0)) {
			t.Fatalf("subject %q, want %q", cs[0].Subject, subject)
		}
	})
}
