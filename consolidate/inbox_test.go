package consolidate

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mindmount/mindmount/memgraph/secret/secrettest"
)

// TestProvenanceTrailer: the consolidation commit names its source by
// path, message range, line range and the hash of those lines — and holds
// no word of the transcript, which stays out of git.
func TestProvenanceTrailer(t *testing.T) {
	e := newEnv(t, "ollama", nil)
	data := jsonl("I keep a vegetable garden behind the house.", "Nice!", "Mostly tomatoes and beans.")
	e.addTranscript("transcripts/s.jsonl", data)
	e.script([]Fact{{Kind: "user", Slug: "keeps-garden", Description: "Keeps a vegetable garden", Fact: "You keep a vegetable garden."}}, []Decision{{Fact: 0, Action: ActionAdd}})
	e.run()
	sum := sha256.Sum256([]byte(data))
	want := "Mindmount-Transcript: transcripts/s.jsonl lines 1-3 sha256:" + hex.EncodeToString(sum[:])
	if msg := e.git("log", "-1", "--format=%B"); !strings.Contains(msg, want) || !strings.Contains(msg, "Mindmount-Source: transcripts/s.jsonl#1-3") {
		t.Fatalf("commit message lacks %q:\n%s", want, msg)
	}
	if files := e.git("ls-files"); strings.Contains(files, "s.jsonl") {
		t.Fatal("the transcript is in git")
	}
	e.checkGit()
	secrettest.ScanRepo(t, e.dir, []string{"behind the house", "tomatoes and beans"}, "transcripts")
}

func TestProvenanceLines(t *testing.T) {
	tr := ParseTranscript("transcripts/t.md", []byte("Title\n\nUser: hi\nthere\nAssistant: hello\nUser: bye"))
	// messages: preamble(1), user(3), assistant(5), user(6)
	cases := map[[2]int]string{{1, 2}: "lines 3-4 ", {2, 4}: "lines 5-6 ", {0, 4}: "lines 1-6 "}
	for r, want := range cases {
		if got := tr.Provenance(r[0], r[1]); !strings.Contains(got, want) {
			t.Errorf("Provenance(%d, %d) = %q, want %q", r[0], r[1], got, want)
		}
	}
	sum := sha256.Sum256([]byte("User: hi\nthere\n"))
	if got := tr.Provenance(1, 2); !strings.HasSuffix(got, hex.EncodeToString(sum[:])) {
		t.Errorf("hash of lines 3-4: %q", got)
	}
	// A JSONL line still being written is not part of any range.
	j := ParseTranscript("transcripts/j.jsonl", []byte(`{"role":"user","content":"a"}`+"\n"+`{"role":"user","con`))
	if got := j.Provenance(0, 1); !strings.Contains(got, "lines 1-1 ") {
		t.Errorf("partial: %q", got)
	}
}

// TestRetention: a fully consolidated transcript older than the retention
// is removed from the inbox; a recent one, one with messages still to
// consolidate, and one git tracks (an old repository) stay.
func TestRetention(t *testing.T) {
	e := newEnv(t, "ollama", nil)
	e.cfg.Retention = 24 * time.Hour
	e.restart()
	old := testNow.Add(-48 * time.Hour)
	e.addTranscript("transcripts/old.jsonl", jsonl("I like rain."))
	e.addTranscript("transcripts/new.jsonl", jsonl("I like snow."))
	e.commitFile("transcripts/tracked.jsonl", jsonl("I like hail."))
	for _, rel := range []string{"transcripts/old.jsonl", "transcripts/tracked.jsonl"} {
		if err := os.Chtimes(filepath.Join(e.dir, rel), old, old); err != nil {
			t.Fatal(err)
		}
	}
	e.run()
	if e.exists("transcripts/old.jsonl") {
		t.Error("the expired transcript was kept")
	}
	if !e.exists("transcripts/new.jsonl") || !e.exists("transcripts/tracked.jsonl") {
		t.Error("a recent or tracked transcript was removed")
	}
	// Not yet consolidated: kept however old (a failed run).
	e.addTranscript("transcripts/pending.jsonl", jsonl("I like fog."))
	os.Chtimes(filepath.Join(e.dir, "transcripts/pending.jsonl"), old, old)
	e.c.expire([]string{"transcripts/pending.jsonl"}, e.cursor())
	if !e.exists("transcripts/pending.jsonl") {
		t.Error("a transcript with unconsolidated messages was removed")
	}
	// The repository setting "forever" keeps everything.
	e.write(".mindmount/settings", "transcript_retention: forever\n")
	e.run()
	if !e.exists("transcripts/pending.jsonl") {
		t.Error("transcript_retention: forever did not keep the transcript")
	}
}

// FuzzProvenance: any transcript gives a provenance for any message range
// without panicking, with a line range inside the file.
func FuzzProvenance(f *testing.F) {
	f.Add("User: a\nAssistant: b\nUser: c", 1, 3)
	f.Add(`{"role":"user","content":"a"}`+"\n"+`{"role":"user"`, 0, 1)
	f.Fuzz(func(t *testing.T, data string, lo, hi int) {
		tr := ParseTranscript("transcripts/f.md", []byte(data))
		if lo < 0 || hi > len(tr.Messages) || lo >= hi {
			lo, hi = 0, len(tr.Messages)
		}
		p := tr.Provenance(lo, hi)
		if !strings.HasPrefix(p, "transcripts/f.md") {
			t.Fatalf("provenance %q", p)
		}
		var first, last int
		if n, _ := fmt.Sscanf(strings.TrimPrefix(p, "transcripts/f.md lines "), "%d-%d", &first, &last); n == 2 {
			if first < 1 || last < first || last > strings.Count(data, "\n")+1 {
				t.Fatalf("lines %d-%d of a %d-line file", first, last, strings.Count(data, "\n")+1)
			}
		}
	})
}
