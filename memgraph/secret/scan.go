package secret

import (
	"bytes"
	"errors"
	"io"
	"slices"
	"sort"
	"strings"
	"unicode/utf8"
)

// ErrUnscannable is returned by Scan when the rules could not run (gitleaks'
// configuration failed to load) or the file could not be read in full
// within the scan's bounds (a LimitError). A caller must then treat the
// bytes as holding a secret: what was not scanned is not committed.
var ErrUnscannable = errors.New("cannot be scanned for secrets")

// LimitError is returned by Scan when what a file holds goes past one of
// the scan's bounds: its decoded content (a gzip bomb) or the number of
// findings. It matches ErrUnscannable; Limit says which bound, in words
// safe to show (it never quotes the file).
type LimitError struct{ Limit string }

func (e *LimitError) Error() string {
	return "cannot be scanned for secrets within its bounds: " + e.Limit
}

// Is makes a LimitError match ErrUnscannable.
func (e *LimitError) Is(target error) bool { return target == ErrUnscannable }

// The scan's bounds. Every stream (the file, and each one decoded from it)
// is read chunkSize bytes at a time, and consecutive chunks overlap by
// chunkOverlap, more than the longest value a rule matches (a 4096-bit PEM
// key is about 3.3 KB, base64-encoded 4.4 KB), so a secret that straddles a
// boundary lies whole in one chunk: memory is a few chunks per stream,
// whatever the file weighs. Decoded streams nest at most maxDepth deep and
// yield at most maxDecoded bytes in all, so a gzip bomb costs a bounded
// read and is then refused, not scanned for ever.
const (
	chunkSize    = 256 << 10
	chunkOverlap = 16 << 10
	maxDepth     = 3
	maxDecoded   = 64 << 20
	maxFindings  = 10000
)

// minRun is the shortest printable run kept from a binary file, as
// strings(1) keeps runs of 4 or more; no rule matches fewer than 8 bytes.
const minRun = 8

// Scan finds the secrets in the bytes of a file, whatever they hold or
// weigh, in bounded memory: text is scanned as it is; anything else (a NUL
// byte, invalid UTF-8: an attachment) through its printable runs, as
// strings(1) reads it. What the file encodes is scanned too (decode.go):
// UTF-16 text, a gzip stream, runs of base64. Lines are the file's own (a
// secret in encoded content is on the line where the encoding starts). It
// fails when the rules cannot run or the file goes past the scan's bounds
// (LimitError); either error matches ErrUnscannable.
func Scan(data []byte) ([]Finding, error) {
	if len(data) == 0 {
		return nil, nil
	}
	sc, err := scanBytes(data)
	if err != nil {
		return nil, err
	}
	sort.SliceStable(sc.found, func(i, j int) bool { return sc.found[i].Line < sc.found[j].Line })
	return sc.found, nil
}

// scanBytes is Scan with what the scan spent.
func scanBytes(data []byte) (*scanner, error) {
	sc := &scanner{}
	return sc, sc.stream(bytesOpener(data), 0, nil, "")
}

// bytesOpener opens data from byte at on.
func bytesOpener(data []byte) opener {
	return func(at int64) (io.Reader, error) { return bytes.NewReader(data[min(at, int64(len(data))):]), nil }
}

// scanner is one Scan: what it found and what its decoders have spent.
type scanner struct {
	found   []Finding
	decoded int64 // bytes produced by decoders, against maxDecoded
}

// opener opens a stream from byte at on (decoders start again from the
// beginning and skip, charged to the scan's bounds).
type opener func(at int64) (io.Reader, error)

// stream scans one stream window by window. lineOf maps an offset of the
// stream to the file's line (nil: the stream's own lines are the file's);
// via names the encoding the stream was decoded from ("" for the file).
func (sc *scanner) stream(open opener, depth int, lineOf func(int64) int, via string) error {
	r, err := open(0)
	if err != nil {
		return nil // a decoder that cannot start: nothing of it to scan
	}
	size := chunkSize
	if br, ok := r.(*bytes.Reader); ok && br.Len() < chunkSize {
		size = br.Len() + 1 // a small text: one window, and EOF seen at once
	}
	buf := make([]byte, size)
	var scratch []byte
	st := streamState{open: open, depth: depth, lineOf: lineOf, via: via, line: 1, lastEnd: -1}
	n := 0
	for {
		m, err := io.ReadFull(r, buf[n:])
		n += m
		var lim *LimitError
		if errors.As(err, &lim) {
			return err
		}
		last := err != nil // EOF, or a decoder's error: what was read is scanned
		w := buf[:n]
		if st.off == 0 && depth < maxDepth {
			if err := sc.nestedAtStart(&st, w); err != nil {
				return err
			}
		}
		owned := n
		if !last {
			owned = n - chunkOverlap
		}
		if scratch, err = sc.window(&st, w, owned, last, scratch); err != nil {
			return err
		}
		if last {
			return nil
		}
		st.line += bytes.Count(w[:owned], []byte{'\n'})
		n = copy(buf, w[owned:])
		st.off += int64(owned)
	}
}

// streamState is where stream is in one stream.
type streamState struct {
	open    opener
	depth   int
	lineOf  func(int64) int
	via     string
	off     int64 // offset of the window's first byte in the stream
	line    int   // the stream's own line at off
	lastEnd int64 // end of the last span kept, to drop a later window's copy
	b64End  int64 // end of the last base64 run handed on (decode.go)
}

// window runs the rules over one window w of a stream: spans starting
// before owned (the rest is the next window's start) and any other that
// ends well before the window does, so a value whose label lies in this
// window is not lost to the next; a span already kept is not kept twice.
func (sc *scanner) window(st *streamState, w []byte, owned int, last bool, scratch []byte) ([]byte, error) {
	text, binary := w, !isText(w)
	if binary {
		scratch = runs(w, scratch)
		text = scratch
	}
	str := string(text)
	if needsGitleaks(str) && gitleaksConfig() == nil {
		return scratch, ErrUnscannable
	}
	at, line := 0, st.line
	for _, s := range withReversed(str, withSplit(str, spansOf(str))) {
		if binary && s.rule == phrasingRule {
			continue
		}
		abs := st.off + int64(s.start)
		if abs < st.lastEnd || !(last || s.start < owned || s.end < len(w)-chunkOverlap/4) {
			continue
		}
		st.lastEnd = st.off + int64(s.end)
		line += bytes.Count(w[at:s.start], []byte{'\n'})
		at = s.start
		l := line
		if st.lineOf != nil {
			l = st.lineOf(abs)
		}
		via := st.via
		if s.reversed {
			via = strings.TrimPrefix(via+", reversed", ", ")
		}
		if s.split {
			via = strings.TrimPrefix(via+", split", ", ")
		}
		if err := sc.add(Finding{Rule: s.rule, Line: l, Via: via, start: int(abs), end: int(st.off) + s.end}); err != nil {
			return scratch, err
		}
	}
	if st.depth < maxDepth {
		if err := sc.base64Runs(st, w, owned, last); err != nil {
			return scratch, err
		}
	}
	return scratch, nil
}

// withReversed adds to spans the tokens text holds written backwards
// ("…hQpLm2_phg"): the rules run over text reversed byte by byte, and
// only the rules that match a token's own shape are kept — a phrasing, a
// labelled word or a number read backwards is noise, not a secret.
func withReversed(text string, spans []span) []span {
	rev := []byte(text)
	slices.Reverse(rev)
	var out []span
	for _, s := range spansOf(string(rev)) {
		if proseRules[s.rule] {
			continue
		}
		out = append(out, span{start: len(text) - s.end, end: len(text) - s.start, rule: s.rule, reversed: true})
	}
	if len(out) == 0 {
		return spans
	}
	all := append(slices.Clone(spans), out...)
	sort.SliceStable(all, func(i, j int) bool { return all[i].start < all[j].start })
	return all
}

// tokenPrefixes start the tokens most often pasted cut into pieces. Only
// prefixes that prose does not hold: an all-capitals sentence glued
// together would look like the rest of an "ASIA" key.
var tokenPrefixes = []string{"ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "glpat-", "xoxb-", "xoxp-", "sk-ant-", "sk-proj-", "sk_live_", "AKIA", "AIza"}

// splitReach is how far after its prefix a token cut into pieces may
// reach, joiners included.
const splitReach = 400

// isJoiner reports what a token cut into pieces is cut by: white space,
// quotes and the + of a concatenation.
func isJoiner(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '"' || c == '\'' || c == '`' || c == '+'
}

// withSplit adds to spans the tokens text holds cut into pieces
// ("ghp_AbCd EfGh…", one piece a line, or "ghp_AbCd" + "EfGh…"): after
// each token prefix no span covers, the next splitReach bytes are read
// with the joiners taken out, and a token-shaped rule matching from the
// prefix over more than one piece is a finding over the pieces' extent.
func withSplit(text string, spans []span) []span {
	var out []span
	for _, p := range tokenPrefixes {
		for off := 0; off < len(text); {
			i := strings.Index(text[off:], p)
			if i < 0 {
				break
			}
			start := off + i
			off = start + len(p)
			if coveredAt(start, spans) || coveredAt(start, out) {
				continue
			}
			if s, ok := splitAt(text, start); ok {
				out = append(out, s)
				off = max(off, s.end)
			}
		}
	}
	if len(out) == 0 {
		return spans
	}
	all := append(slices.Clone(spans), out...)
	sort.SliceStable(all, func(i, j int) bool { return all[i].start < all[j].start })
	return all
}

// splitAt is the token cut into pieces that starts at text[start], if a
// token-shaped rule finds one there in the first two to maxPieces pieces
// joined (fewer first: the piece after a token's end must not be glued
// to it). A token is random: the joined match must hold two digits at
// least (see splitMatch), which words glued together almost never do.
func splitAt(text string, start int) (span, bool) {
	end := min(len(text), start+splitReach)
	var joined []byte
	var pos []int // pos[i]: joined[i]'s offset in text
	pieces := 0
	for j := start; j < end && pieces < maxPieces; {
		k := j
		for k < end && !isJoiner(text[k]) {
			joined = append(joined, text[k])
			pos = append(pos, k)
			k++
		}
		pieces++
		for k < end && isJoiner(text[k]) {
			k++
		}
		j = k
		if pieces < 2 {
			continue
		}
		if s, ok := splitMatch(string(joined), pos, start); ok {
			return s, true
		}
	}
	return span{}, false
}

// maxPieces bounds how many pieces a split token is looked for in.
const maxPieces = 8

// splitMatch is a token-shaped rule's match at the start of joined that
// spans more than one piece and holds two digits (one, when it has no
// lower-case letter).
func splitMatch(joined string, pos []int, start int) (span, bool) {
	for _, s := range spansOf(joined) {
		if s.start != 0 || proseRules[s.rule] {
			continue
		}
		last := pos[s.end-1] + 1
		digits, lower := 0, false
		for _, c := range joined[s.start:s.end] {
			digits += b2i(c >= '0' && c <= '9')
			lower = lower || c >= 'a' && c <= 'z'
		}
		// Glued prose is lower case; an all-capitals key (AWS) holds
		// fewer digits, and capitals glued to AKIA are no sentence.
		if last-start == s.end-s.start || digits < 2 && (lower || digits < 1) {
			return span{}, false
		}
		return span{start: start, end: last, rule: s.rule, split: true}, true
	}
	return span{}, false
}

// coveredAt reports whether a span covers offset i.
func coveredAt(i int, spans []span) bool {
	for _, s := range spans {
		if s.start <= i && i < s.end {
			return true
		}
	}
	return false
}

// phrasingRule reads a secret from the words of a sentence ("my password
// is …", "pw for the bank = …"). In binary content the printable runs are
// chance, and its short labels turn up by chance too (one random 2 MiB
// file in fifteen held a "pw"-like run): there only the rules that match a
// secret's own shape apply. Text inside a binary (UTF-16, gzip, base64) is
// decoded and read as text.
const phrasingRule = "mindmount-password"

// proseRules find a secret by the words around it or by its digits, not
// by its own shape: read backwards they find nothing real.
var proseRules = map[string]bool{"mindmount-password": true, "mindmount-named-key": true, "mindmount-card-number": true,
	"mindmount-bearer-token": true, "mindmount-url-credentials": true, "mindmount-gcp-private-key-id": true, "generic-api-key": true}

func (sc *scanner) add(f Finding) error {
	if len(sc.found) >= maxFindings {
		return &LimitError{Limit: "more than 10000 secrets"}
	}
	sc.found = append(sc.found, f)
	return nil
}

// lineAt is the file's line of offset abs of the stream st reads, in
// window w (whose first byte is at st.off).
func (st *streamState) lineAt(w []byte, abs int64) int {
	if st.lineOf != nil {
		return st.lineOf(abs)
	}
	return st.line + bytes.Count(w[:abs-st.off], []byte{'\n'})
}

// isText reports whether a window reads as text: no NUL and valid UTF-8,
// but for a character the window's edges cut.
func isText(w []byte) bool {
	if bytes.IndexByte(w, 0) >= 0 {
		return false
	}
	a := 0
	for a < len(w) && a < 3 && !utf8.RuneStart(w[a]) {
		a++
	}
	b := len(w)
	for i := 1; i <= 3 && i <= len(w)-a; i++ {
		if c := w[len(w)-i]; utf8.RuneStart(c) {
			if !utf8.FullRune(w[len(w)-i:]) {
				b = len(w) - i
			}
			break
		}
	}
	return utf8.Valid(w[a:b])
}

// runs is w with every byte outside a printable run of minRun bytes or
// more replaced by a newline: the runs as strings(1) lists them, one per
// line, at the offsets they hold in w (so a span maps back to the file as
// it is). Printable is printable ASCII, tab, newline, carriage return and
// whole UTF-8 characters: a byte of no valid character is noise, and
// random bytes (a photo, an archive) then hold few runs, and few that a
// rule could mistake for a phrase ("pW=*…"). A run cut by the window's
// start is judged by what the window holds of it: a value shorter than
// minRun matches no rule anyway.
func runs(w, out []byte) []byte {
	out = append(out[:0], w...)
	start := -1
	flush := func(end int) {
		if start >= 0 && end-start < minRun {
			for i := start; i < end; i++ {
				out[i] = '\n'
			}
		}
		start = -1
	}
	for i := 0; i < len(w); {
		size := 1
		ok := printable(w[i])
		if w[i] >= utf8.RuneSelf {
			var r rune
			r, size = utf8.DecodeRune(w[i:])
			ok = r != utf8.RuneError || size > 1
		}
		if !ok {
			flush(i)
			out[i] = '\n'
			i++
			continue
		}
		if start < 0 {
			start = i
		}
		i += size
	}
	flush(len(w))
	return out
}

// ScanAdded returns the findings of data beyond those of prev (rule by
// rule, by count), as Added does for text: a secret already committed does
// not make every later edit refused.
func ScanAdded(prev, data []byte) ([]Finding, error) {
	found, err := Scan(data)
	if err != nil || len(found) == 0 {
		return nil, err
	}
	var before []Finding
	if len(prev) > 0 {
		if before, err = Scan(prev); err != nil {
			return nil, err
		}
	}
	return beyond(found, before), nil
}

// InName returns the secrets in a file or folder name, or a whole
// relative path, one finding per component that holds one (Line is the
// component's 1-based position): a token pasted as a file name reaches the
// tree, the commit message and every listing as surely as one in a file.
// Each component is read as it is and with '-', '_' and '.' read as
// spaces, so "password-is-hunter2" is the sentence it spells.
func InName(name string) []Finding {
	var out []Finding
	for i, c := range strings.Split(name, "/") {
		if rule := componentRule(c); rule != "" {
			out = append(out, Finding{Rule: rule, Line: i + 1})
		}
	}
	return out
}

var nameSpaces = strings.NewReplacer("-", " ", "_", " ", ".", " ")

// componentRule is the rule of the first secret in one name component, or "".
func componentRule(c string) string {
	if c == "" {
		return ""
	}
	if r := nameRule(c); r != "" {
		return r
	}
	return nameRule(nameSpaces.Replace(c))
}

// nameRule runs the rules over a short text. gitleaks' rules cost about
// 0.1 ms a call whatever the length, so they are spared a name made only
// of lower-case words ("likes-specialty-coffee.md", the usual memory
// name): every key, token and hash they find holds a digit, a capital or
// an assignment sign (a fuzz test holds the shortcut to the full rules).
// mindmount's rules (the phrasings, card numbers, URL credentials) always
// run.
func nameRule(text string) string {
	var spans []span
	if plainWords(text) {
		spans = mindmountSpans(text)
	} else {
		spans = spansOf(text)
	}
	for _, s := range spans {
		if s.end > s.start {
			return s.rule
		}
	}
	return ""
}

// plainWords reports whether s holds only lower-case ASCII letters, '-',
// '_', '.' and spaces.
func plainWords(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c == '-' || c == '_' || c == '.' || c == ' ') {
			return false
		}
	}
	return true
}

// SafeName is name with every component that holds a secret replaced by
// its rule's marker: what a log line, an error or a status file may show
// of a name InName flags.
func SafeName(name string) string {
	found := InName(name)
	if len(found) == 0 {
		return name
	}
	parts := strings.Split(name, "/")
	for _, f := range found {
		parts[f.Line-1] = Marker(f.Rule)
	}
	return strings.Join(parts, "/")
}

// printable is strings(1)'s rule for one byte: tab, newline, carriage
// return and the printable ASCII range.
func printable(c byte) bool {
	return c == '\t' || c == '\n' || c == '\r' || (c >= 0x20 && c < 0x7f)
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
