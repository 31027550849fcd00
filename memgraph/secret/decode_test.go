package secret

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"errors"
	"io"
	"strings"
	"testing"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/mindmount/mindmount/memgraph/secret/secrettest"
)

func utf16LE(s string, bom bool) []byte {
	var out []byte
	if bom {
		out = append(out, 0xff, 0xfe)
	}
	for _, u := range utf16.Encode([]rune(s)) {
		out = append(out, byte(u), byte(u>>8))
	}
	return out
}

func utf16BE(s string) []byte {
	out := []byte{0xfe, 0xff}
	for _, u := range utf16.Encode([]rune(s)) {
		out = append(out, byte(u>>8), byte(u))
	}
	return out
}

func gz(members ...[]byte) []byte {
	var b bytes.Buffer
	for _, m := range members {
		w := gzip.NewWriter(&b)
		w.Write(m)
		w.Close()
	}
	return b.Bytes()
}

var b64 = base64.StdEncoding.EncodeToString

// TestScanEncoded: a secret inside UTF-16, gzip or base64 — alone or
// nested — is found on the line where its encoding starts, named by the
// encoding; ordinary encoded content is not flagged.
func TestScanEncoded(t *testing.T) {
	note := "# Notes\n\ndeploy with " + ghToken + "\n"
	long := strings.Repeat("You mentioned a bag of Ethiopian coffee from a local roaster.\n", 12000) // 744 KB
	longWithToken := long[:400000] + "key " + stripeKey + "\n" + long[400000:]
	cases := []struct {
		name string
		data []byte
		line int
		via  string
	}{
		{"UTF-16LE with a byte order mark", utf16LE(note, true), 3, "utf-16"},
		{"UTF-16LE without one", utf16LE(note, false), 3, "utf-16"},
		{"UTF-16BE", utf16BE(note), 3, "utf-16"},
		{"gzip", gz([]byte(note)), 1, "gzip"},
		{"the second gzip member", gz([]byte("nothing\n"), []byte(note)), 1, "gzip"},
		{"gzip of UTF-16", gz(utf16LE(note, true)), 1, "utf-16"},
		{"base64 of a token", []byte("# Notes\n\nblob: " + b64([]byte(ghToken)) + "\n"), 3, "base64"},
		{"URL-safe base64 of a sentence", []byte("a\nb\nc " + base64.RawURLEncoding.EncodeToString([]byte("my password is Hunter2x9!??>>")) + " d\n"), 3, "base64"},
		{"base64 of gzip", []byte("x\n" + b64(gz([]byte(note))) + "\n"), 2, "gzip"},
		{"base64 of UTF-16 (PowerShell)", []byte("powershell -EncodedCommand " + b64(utf16LE("$env:GH="+ghToken, false)) + "\n"), 1, "utf-16"},
		{"base64 of base64", []byte("x " + b64([]byte(b64([]byte("token "+ghToken)))) + "\n"), 1, "base64"},
		{"a base64 attachment longer than a chunk", []byte("---\ndata:\n" + b64([]byte(longWithToken)) + "\n---\n"), 3, "base64"},
	}
	for _, c := range cases {
		found, err := Scan(c.data)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		ok := false
		for _, f := range found {
			ok = ok || f.Line == c.line && f.Via == c.via
		}
		if !ok {
			t.Errorf("%s: %v, want a finding on line %d inside %s", c.name, found, c.line, c.via)
		}
	}
	for name, data := range map[string][]byte{
		"UTF-16 prose":         utf16LE("# Tea\n\nYou like green tea in the morning.\n", true),
		"gzip of prose":        gz([]byte(long)),
		"base64 of prose":      []byte("img: " + b64([]byte(long[:3000])) + "\n"),
		"hashes":               []byte("commit 4b825dc642cb6eb9a060e54bf8d69288fbee4904\nsha256 e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855\n"),
		"a corrupt gzip":       append(gz([]byte(long))[:100], 0xff, 0xff),
		"a gzip cut short":     gz([]byte(long))[:2000],
		"an odd UTF-16 length": append(utf16LE("plain words here", true), 'x'),
	} {
		found, err := Scan(data)
		if err != nil || len(found) != 0 {
			t.Errorf("%s: %v %v", name, found, err)
		}
	}
}

// TestScanStraddlesChunks: a secret across the boundary of two chunks is
// found once, in a binary file's printable runs as in text.
func TestScanStraddlesChunks(t *testing.T) {
	noise := bytes.Repeat([]byte{0, 1, 0xff, 'a', 'b', 2}, chunkSize/3)
	for _, at := range []int{chunkSize - chunkOverlap - 10, chunkSize - chunkOverlap + 5, chunkSize - 12, 2*(chunkSize-chunkOverlap) - 3} {
		data := append(append(append([]byte{}, noise[:at]...), "\x00"+ghToken+"\x00"...), noise...)
		found, err := Scan(data)
		if err != nil {
			t.Fatal(err)
		}
		if len(found) != 1 || found[0].Via != "" {
			t.Errorf("token at %d: %v, want one finding", at, found)
		}
	}
}

// TestScanGzipBomb: a gzip stream that inflates past the scan's bounds is
// refused with a LimitError after a bounded read, in bounded memory.
func TestScanGzipBomb(t *testing.T) {
	var b bytes.Buffer
	w, _ := gzip.NewWriterLevel(&b, gzip.BestCompression)
	if _, err := io.CopyN(w, zeros{}, 4*maxDecoded); err != nil {
		t.Fatal(err)
	}
	w.Close()
	bomb := b.Bytes()
	var err error
	var sc *scanner
	peak := secrettest.HeapPeak(func() { sc, err = scanBytes(bomb) })
	var lim *LimitError
	if !errors.As(err, &lim) || !errors.Is(err, ErrUnscannable) {
		t.Fatalf("a %d KB gzip of %d MiB: %v, want a LimitError", len(bomb)>>10, 4*maxDecoded>>20, err)
	}
	if sc.decoded > maxDecoded+chunkSize {
		t.Errorf("inflated %d MiB before stopping", sc.decoded>>20)
	}
	if peak > scanBound {
		t.Errorf("the bomb held %d MiB of heap", peak>>20)
	}
	t.Logf("%d KB bomb refused: %v (heap peak %.1f MiB)", len(bomb)>>10, err, float64(peak)/(1<<20))
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) { clear(p); return len(p), nil }

func FuzzUTF16Reader(f *testing.F) {
	f.Add(utf16LE("héllo 😀\n", true), false)
	f.Add([]byte{0x00, 0xd8, 0x41, 0x00}, false) // an unpaired surrogate
	f.Add(utf16BE("x")[2:], true)
	f.Fuzz(func(t *testing.T, data []byte, big bool) {
		out, err := io.ReadAll(&utf16Reader{r: bufioReader(data), big: big})
		if err != nil {
			t.Fatal(err)
		}
		if !utf8.Valid(out) {
			t.Fatalf("invalid UTF-8 from %x", data)
		}
		units := make([]uint16, len(data)/2)
		for i := range units {
			a, b := uint16(data[2*i]), uint16(data[2*i+1])
			if big {
				units[i] = a<<8 | b
			} else {
				units[i] = b<<8 | a
			}
		}
		if len(units) > 0 && units[0] == 0xfeff {
			units = units[1:]
		}
		if want := string(utf16.Decode(units)); string(out) != want {
			t.Fatalf("%x: %q, want %q", data, out, want)
		}
	})
}

func FuzzDecodeBase64(f *testing.F) {
	f.Add([]byte(b64([]byte(ghToken))))
	f.Add([]byte("a-_b"))
	f.Add([]byte("Q"))
	f.Fuzz(func(t *testing.T, run []byte) {
		for _, c := range run {
			if !base64Char(c) {
				return
			}
		}
		dec := decodeBase64(run)
		if len(dec) > len(run)*3/4+1 {
			t.Fatalf("%d bytes from %d characters", len(dec), len(run))
		}
		// The stream decoder agrees with the one for runs in a window.
		out, _ := io.ReadAll(base64.NewDecoder(base64.RawStdEncoding, &runReader{r: bufioReader(append(run, ' '))}))
		if !bytes.HasPrefix(dec, out) && !bytes.HasPrefix(out, dec) {
			t.Fatalf("%q: %x and %x", run, dec, out)
		}
	})
}

// FuzzScanEncoded: whatever bytes a file holds, encoded or not, the scan
// ends within its bounds, without panicking, and its lines are the file's.
func FuzzScanEncoded(f *testing.F) {
	f.Add(gz([]byte("token " + ghToken)))
	f.Add(utf16LE("password: Hunter2x9\n", false))
	f.Add([]byte("x " + b64(gz(utf16LE("pin: 4711", true)))))
	f.Add([]byte{0x1f, 0x8b, 8, 0, 0, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		found, err := Scan(data)
		if err != nil {
			var lim *LimitError
			if !errors.As(err, &lim) {
				t.Fatal(err)
			}
			return
		}
		lines := bytes.Count(data, []byte{'\n'}) + 1
		for _, fd := range found {
			if fd.Line < 1 || fd.Line > lines && fd.Via == "" {
				t.Fatalf("line %d of %d", fd.Line, lines)
			}
		}
	})
}

// FuzzRuns: the printable runs keep every offset of the window.
func FuzzRuns(f *testing.F) {
	f.Add([]byte("\x00abcdefgh\x01abc\xff"))
	f.Fuzz(func(t *testing.T, w []byte) {
		out := runs(w, nil)
		if len(out) != len(w) {
			t.Fatalf("%d bytes from %d", len(out), len(w))
		}
		for i, c := range out {
			if c != '\n' && c != w[i] {
				t.Fatalf("byte %d changed", i)
			}
		}
		if isText(w) && bytes.IndexByte(w, 0) >= 0 {
			t.Fatalf("text with a NUL")
		}
	})
}

func bufioReader(b []byte) *bufio.Reader { return bufio.NewReader(bytes.NewReader(b)) }

// TestScanReversed: a token written backwards is found; prose read
// backwards is not (the golden sets' false-positive test covers more).
func TestScanReversed(t *testing.T) {
	rev := []byte(ghToken)
	for i, j := 0, len(rev)-1; i < j; i, j = i+1, j-1 {
		rev[i], rev[j] = rev[j], rev[i]
	}
	found, err := Scan([]byte("# Notes\n\nbackwards: " + string(rev) + "\n"))
	if err != nil || len(found) == 0 || found[0].Line != 3 || found[0].Via != "reversed" {
		t.Errorf("a reversed token: %v %v", found, err)
	}
	for _, text := range []string{"4 :nip eht dna 2retnuh si drowssap ym\n", "# Tea\n\nYou like green tea, 1234 5678 9012 3456.\n"} {
		if found, _ := Scan([]byte(text)); len(found) != 0 {
			t.Errorf("%q: %v", text, found)
		}
	}
}

// TestScanSplit: a token cut into pieces — by spaces, one piece a line,
// or concatenated strings — is found over the pieces' extent; the same
// prefixes in prose, and a whole token, are not read as split.
func TestScanSplit(t *testing.T) {
	gh := ghToken
	for _, c := range []struct{ name, text string }{
		{"spaces", "# Notes\n\nkey: " + gh[:12] + " " + gh[12:24] + " " + gh[24:] + "\n"},
		{"lines", "# Notes\n\n" + gh[:20] + "\n" + gh[20:] + "\n"},
		{"concatenated", "# Notes\n\ntoken = \"" + gh[:15] + "\" + \"" + gh[15:] + "\"\n"},
		{"aws", "# Notes\n\naws AKIAZ7QW ERTY UIOP ASDF here\n"},
	} {
		found, err := Scan([]byte(c.text))
		if err != nil || len(found) != 1 || found[0].Line != 3 || (found[0].Via != "split" && c.name != "concatenated") {
			// A concatenation's assignment is found by the labelled-value
			// rule too; then split is not needed.
			t.Errorf("%s: %+v %v", c.name, found, err)
		}
	}
	if found, _ := Scan([]byte("# Notes\n\nwhole: " + gh + "\n")); len(found) != 1 || found[0].Via != "" {
		t.Errorf("a whole token: %+v", found)
	}
	for _, text := range []string{
		"# Git\n\nThe prefix ghp_ marks a personal access token and gho_ an OAuth one; we rotate them every quarter and store them in the vault.\n",
		"# Keys\n\nAWS keys start with AKIA followed by sixteen letters or digits such as the ones in our docs.\n",
		"# Slack\n\nBot tokens look like xoxb- followed by numbers and letters separated by dashes.\n",
	} {
		if found, _ := Scan([]byte(text)); len(found) != 0 {
			t.Errorf("%q: %+v", text, found)
		}
	}
}
