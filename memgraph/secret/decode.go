package secret

import (
	"bufio"
	"compress/gzip"
	"encoding/base64"
	"io"
	"unicode/utf16"
	"unicode/utf8"
)

// A secret hidden by an encoding is still a secret: a file or a run of
// text may be UTF-16, a gzip stream or base64, and what it decodes to is
// scanned with the same rules, within the same bounds (scan.go), nested up
// to maxDepth (base64 of gzip of UTF-16). Findings in decoded content carry
// the encoding (Finding.Via) and the line where the encoding starts.

// nestedAtStart starts the streams a whole stream may decode to, judged on
// its first window w: gzip by its magic number, UTF-16 by its byte order
// mark or by zero bytes interleaved with ASCII.
func (sc *scanner) nestedAtStart(st *streamState, w []byte) error {
	fixed := st.lineAt(w, 0)
	switch {
	case len(w) >= 3 && w[0] == 0x1f && w[1] == 0x8b && w[2] == 8:
		return sc.stream(sc.decoder(st.open, func(r io.Reader) (io.Reader, error) {
			z, err := gzip.NewReader(r)
			if err != nil {
				return nil, err
			}
			return z, nil
		}), st.depth+1, constLine(fixed), "gzip")
	default:
		if order := utf16Order(w); order != nil {
			lineOf := st.lineOf // UTF-16 keeps the lines of what it encodes
			if lineOf != nil {
				lineOf = constLine(fixed)
			}
			return sc.stream(sc.decoder(st.open, func(r io.Reader) (io.Reader, error) {
				return &utf16Reader{r: bufio.NewReader(r), big: order[0] == 0}, nil
			}), st.depth+1, lineOf, "utf-16")
		}
	}
	return nil
}

func constLine(l int) func(int64) int { return func(int64) int { return l } }

// decoder opens the stream dec makes of the one open reads, counted
// against the scan's bounds (skipping to an offset included).
func (sc *scanner) decoder(open opener, dec func(io.Reader) (io.Reader, error)) opener {
	return func(at int64) (io.Reader, error) {
		r, err := open(0)
		if err != nil {
			return nil, err
		}
		d, err := dec(r)
		if err != nil {
			return nil, err
		}
		b := &budgetReader{r: d, sc: sc}
		if at > 0 {
			if _, err := io.CopyN(io.Discard, b, at); err != nil {
				return nil, err
			}
		}
		return b, nil
	}
}

// budgetReader counts what a decoder yields against maxDecoded.
type budgetReader struct {
	r  io.Reader
	sc *scanner
}

func (b *budgetReader) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	b.sc.decoded += int64(n)
	if b.sc.decoded > maxDecoded {
		return n, &LimitError{Limit: "its encoded content (gzip, base64, UTF-16) decodes to more than 64 MiB"}
	}
	return n, err
}

// utf16Order tells UTF-16 text by its start: a byte order mark (FF FE
// little-endian, FE FF big-endian), or, without one, ASCII interleaved with
// zero bytes — most of one side's bytes zero, almost none of the other's.
// It returns the mark's two bytes ({0, 1} for big-endian, {1, 0} for
// little), or nil.
func utf16Order(w []byte) []byte {
	if len(w) >= 2 {
		switch {
		case w[0] == 0xff && w[1] == 0xfe:
			return []byte{1, 0}
		case w[0] == 0xfe && w[1] == 0xff:
			return []byte{0, 1}
		}
	}
	sample := w[:min(len(w), 4096)&^1]
	if len(sample) < 16 {
		return nil
	}
	var zero [2]int
	for i, c := range sample {
		if c == 0 {
			zero[i&1]++
		}
	}
	pairs := len(sample) / 2
	switch {
	case zero[1]*10 >= pairs*7 && zero[0]*20 <= pairs:
		return []byte{1, 0}
	case zero[0]*10 >= pairs*7 && zero[1]*20 <= pairs:
		return []byte{0, 1}
	}
	return nil
}

// utf16Reader decodes UTF-16 to UTF-8 as it is read (a byte order mark is
// dropped; an unpaired surrogate becomes U+FFFD).
type utf16Reader struct {
	r       *bufio.Reader
	big     bool
	pending []byte
	started bool
	err     error
	held    int // 1 + a unit read after an unpaired surrogate, or 0
}

func (u *utf16Reader) unit() (uint16, error) {
	if u.held > 0 {
		c := uint16(u.held - 1)
		u.held = 0
		return c, nil
	}
	a, err := u.r.ReadByte()
	if err != nil {
		return 0, err
	}
	b, err := u.r.ReadByte()
	if err != nil {
		return 0, io.EOF // an odd last byte: nothing more to decode
	}
	if u.big {
		return uint16(a)<<8 | uint16(b), nil
	}
	return uint16(b)<<8 | uint16(a), nil
}

func (u *utf16Reader) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		if len(u.pending) > 0 {
			c := copy(p[n:], u.pending)
			n += c
			u.pending = u.pending[c:]
			continue
		}
		if u.err != nil {
			break
		}
		c, err := u.unit()
		if err != nil {
			u.err = err
			break
		}
		if !u.started {
			u.started = true
			if c == 0xfeff {
				continue
			}
		}
		r := rune(c)
		if utf16.IsSurrogate(r) {
			c2, err := u.unit()
			if err != nil {
				u.err = err
				r = utf8.RuneError
			} else if r = utf16.DecodeRune(r, rune(c2)); r == utf8.RuneError {
				u.held = int(c2) + 1 // the second unit starts the next character
			}
		}
		var enc [4]byte
		u.pending = append(u.pending[:0], enc[:utf8.EncodeRune(enc[:], r)]...)
	}
	if n == 0 && u.err != nil {
		return 0, u.err
	}
	return n, nil
}

// Base64 runs: at least minBase64 characters of the standard or URL-safe
// alphabet, mixing upper and lower case (a hex hash or a path of words is
// not base64 worth decoding), then padding.
const minBase64 = 20

// streamedRun stands for the end of a base64 run decoded as a stream
// until a later window sees where it ends.
const streamedRun = 1 << 62

func base64Char(c byte) bool {
	return c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '+' || c == '/' || c == '-' || c == '_'
}

// base64Runs decodes the base64 runs of window w that start in it at or
// after where the last one handed on ended: a run that ends in the window
// is decoded here, the decoded runs scanned together as one text (each
// finding on its run's line); a run the window's end cuts (longer than
// the overlap: an attachment) is decoded as a stream of its own from its
// start. A decoded run that is gzip or UTF-16 is a stream of its own too.
func (sc *scanner) base64Runs(st *streamState, w []byte, owned int, last bool) error {
	if st.b64End == streamedRun {
		// A run handed on as a stream continues into this window from
		// its start: it ends at the first character outside the alphabet.
		k := 0
		for k < len(w) && base64Char(w[k]) {
			k++
		}
		if k == len(w) && !last {
			return nil // all of this window is that run
		}
		st.b64End = st.off + int64(k)
	}
	var batch []byte
	var starts []int // offset of each decoded run in batch
	var lines []int  // the file's line of each
	for i := 0; i < len(w); {
		if !base64Char(w[i]) {
			i++
			continue
		}
		j := i
		upper, lower := false, false
		for j < len(w) && base64Char(w[j]) {
			upper = upper || w[j] >= 'A' && w[j] <= 'Z'
			lower = lower || w[j] >= 'a' && w[j] <= 'z'
			j++
		}
		abs := st.off + int64(i)
		run := w[i:j]
		i = j
		if abs < st.b64End || len(run) < minBase64 || !upper || !lower {
			continue
		}
		if abs-st.off >= int64(owned) && !last {
			break // the next window's
		}
		st.b64End = abs + int64(len(run))
		line := st.lineAt(w, abs)
		if j == len(w) && !last {
			// Cut by the window's end: decode it as a stream.
			st.b64End = streamedRun // until a window sees where it ends
			if err := sc.stream(sc.decoder(st.open, func(r io.Reader) (io.Reader, error) {
				if _, err := io.CopyN(io.Discard, r, abs); err != nil {
					return nil, err
				}
				return base64.NewDecoder(base64.RawStdEncoding, &runReader{r: bufio.NewReader(r)}), nil
			}), st.depth+1, constLine(line), "base64"); err != nil {
				return err
			}
			break
		}
		dec := decodeBase64(run)
		sc.decoded += int64(len(dec))
		if sc.decoded > maxDecoded {
			return &LimitError{Limit: "its encoded content (gzip, base64, UTF-16) decodes to more than 64 MiB"}
		}
		if startsEncoded(dec) {
			if err := sc.stream(bytesOpener(dec), st.depth+1, constLine(line), "base64"); err != nil {
				return err
			}
			continue
		}
		starts = append(starts, len(batch))
		lines = append(lines, line)
		batch = append(append(batch, dec...), '\n')
	}
	if len(batch) == 0 {
		return nil
	}
	return sc.stream(bytesOpener(batch), st.depth+1, func(off int64) int {
		k := 0
		for k+1 < len(starts) && int64(starts[k+1]) <= off {
			k++
		}
		return lines[k]
	}, "base64")
}

// startsEncoded reports whether decoded bytes start a stream nestedAtStart
// decodes (gzip, UTF-16).
func startsEncoded(b []byte) bool {
	return len(b) >= 3 && b[0] == 0x1f && b[1] == 0x8b && b[2] == 8 || utf16Order(b) != nil
}

// decodeBase64 decodes a run as standard or URL-safe base64 without
// padding, dropping a last character that cannot complete a byte.
func decodeBase64(run []byte) []byte {
	norm := make([]byte, len(run))
	for i, c := range run {
		switch c {
		case '-':
			c = '+'
		case '_':
			c = '/'
		}
		norm[i] = c
	}
	if len(norm)%4 == 1 {
		norm = norm[:len(norm)-1]
	}
	out := make([]byte, base64.RawStdEncoding.DecodedLen(len(norm)))
	n, _ := base64.RawStdEncoding.Decode(out, norm)
	return out[:n]
}

// runReader yields a base64 run from its start to its first character
// outside the alphabet, URL-safe characters read as standard ones.
type runReader struct {
	r    *bufio.Reader
	done bool
}

func (rr *runReader) Read(p []byte) (int, error) {
	if rr.done {
		return 0, io.EOF
	}
	n := 0
	for n < len(p) {
		c, err := rr.r.ReadByte()
		if err != nil || !base64Char(c) {
			rr.done = true
			break
		}
		switch c {
		case '-':
			c = '+'
		case '_':
			c = '/'
		}
		p[n] = c
		n++
	}
	if n == 0 {
		return 0, io.EOF
	}
	return n, nil
}
