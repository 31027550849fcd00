package secret

import (
	"bytes"
	"strings"
	"testing"
)

// TestScanEveryByte (issue 23, item 5): a text with one NUL at its end, a
// binary file, and files far over the old 4 MiB limit — with the secret at
// the start, across a chunk boundary and at the very end — are all read,
// and the line is the file's own.
func TestScanEveryByte(t *testing.T) {
	filler := strings.Repeat("You mentioned a bag of Ethiopian coffee from a local roaster.\n", (5<<20)/62)
	cases := []struct {
		name string
		data []byte
		line int
	}{
		{"text ending in NUL", []byte("# Keys\n\nthe key " + stripeKey + "\n\x00"), 3},
		{"binary", append(append([]byte{0x89, 'P', 'N', 'G', 0, 0, 0, 0xff, 0xfe, '\n'}, []byte("tEXt "+ghToken+"\x00\x01")...), bytes.Repeat([]byte{0, 0xff}, 1000)...), 2},
		{"invalid UTF-8", []byte("caf\xe9\nkey " + awsKey + "\n"), 2},
		{"5 MiB, secret at the end", []byte(filler + "key " + stripeKey + "\n"), strings.Count(filler, "\n") + 1},
		{"5 MiB, secret at the start", []byte("key " + stripeKey + "\n" + filler), 1},
	}
	// A secret straddling every possible chunk boundary of the first two.
	for _, at := range []int{chunkSize - chunkOverlap - 10, chunkSize - 10, 2*(chunkSize-chunkOverlap) - 5} {
		pad := strings.Repeat("x", at-2) + "\n\n"
		cases = append(cases, struct {
			name string
			data []byte
			line int
		}{"boundary", []byte(pad + stripeKey + "\n" + filler[:chunkSize]), 3})
	}
	for _, c := range cases {
		found, err := Scan(c.data)
		if err != nil {
			t.Fatal(err)
		}
		if len(found) != 1 || found[0].Line != c.line {
			t.Errorf("%s: %v, want one finding on line %d", c.name, found, c.line)
		}
	}
	if found, _ := Scan(bytes.Repeat([]byte{0, 1, 2, 0xff}, 1<<18)); len(found) != 0 {
		t.Errorf("noise: %v", found)
	}
}

func TestScanAdded(t *testing.T) {
	prev := []byte("key " + stripeKey + "\n\x00")
	if got, _ := ScanAdded(prev, append(prev, "more"...)); len(got) != 0 {
		t.Fatalf("an old secret is reported again: %v", got)
	}
	if got, _ := ScanAdded(prev, append(prev, awsKey...)); len(got) != 1 {
		t.Fatalf("a new one is not: %v", got)
	}
}

// TestInName: a secret in a file or folder name is found, and SafeName
// shows the name without it.
func TestInName(t *testing.T) {
	for _, name := range []string{
		"attachments/" + ghToken + ".txt",
		ghToken + "/notes.md",
		"notes/" + awsKey + ".md",
		"notes/password-is-Hunter2x9.md",
	} {
		found := InName(name)
		if len(found) == 0 {
			t.Errorf("%q: nothing found", name)
			continue
		}
		safe := SafeName(name)
		if strings.Contains(safe, ghToken) || strings.Contains(safe, awsKey) || strings.Contains(safe, "Hunter2x9") || !strings.Contains(safe, "[REDACTED:") {
			t.Errorf("SafeName(%q) = %q", name, safe)
		}
	}
	for _, name := range []string{"user_memory/likes-tea.md", "attachments/2026-12-02-receipt.pdf", "notes/password-manager-choice.md", "system/api-key-rotation.md"} {
		if found := InName(name); len(found) != 0 {
			t.Errorf("%q: %v", name, found)
		}
		if SafeName(name) != name {
			t.Errorf("SafeName(%q) changed it", name)
		}
	}
}

func FuzzScan(f *testing.F) {
	f.Add([]byte("key " + stripeKey + "\x00"))
	f.Add([]byte{0xff, 0, 'a'})
	f.Fuzz(func(t *testing.T, data []byte) {
		found, err := Scan(data)
		if err != nil {
			t.Fatal(err)
		}
		lines := bytes.Count(data, []byte{'\n'}) + 1
		for _, fd := range found {
			if fd.Line < 1 || fd.Line > lines {
				t.Fatalf("line %d of %d", fd.Line, lines)
			}
		}
		// The scan sees at least what Find sees in a text.
		if bytes.IndexByte(data, 0) < 0 && len(Find(string(data))) > 0 && len(found) == 0 {
			t.Fatalf("Find finds, Scan does not: %q", data)
		}
	})
}

// BenchmarkScan5MiB measures the scan of a 5 MiB text file (throughput in
// MB/s).
func BenchmarkScan5MiB(b *testing.B) {
	line := "You mentioned a bag of Ethiopian coffee from a local roaster.\n"
	data := []byte(strings.Repeat(line, (5<<20)/len(line)))
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		Scan(data)
	}
}

// BenchmarkInName is the cost the name rule adds to every create and
// rename at the mount and to every file of a repository scan.
func BenchmarkInName(b *testing.B) {
	for b.Loop() {
		InName("user_memory/likes-specialty-coffee.md")
	}
}

// FuzzInName: the name rule's shortcut (gitleaks only on a long run of
// letters and digits) never misses what the full rules find in a
// component.
func FuzzInName(f *testing.F) {
	f.Add("attachments/" + ghToken + ".txt")
	f.Add("notes/password-is-Hunter2x9.md")
	f.Add("user_memory/likes-tea.md")
	f.Add("notes/heroku-api-key-abcdefghijklmnopqrstuvwxyzabcdef.md")
	f.Fuzz(func(t *testing.T, name string) {
		found := InName(name)
		for i, c := range strings.Split(name, "/") {
			if len(Find(c)) == 0 {
				continue
			}
			ok := false
			for _, fd := range found {
				ok = ok || fd.Line == i+1
			}
			if !ok {
				t.Fatalf("component %d of %q holds a secret InName misses", i+1, name)
			}
		}
		if safe := SafeName(name); len(found) > 0 && len(InName(safe)) > 0 {
			t.Fatalf("SafeName(%q) = %q still holds a secret", name, safe)
		}
	})
}
