package recall

import "strings"

// maxSnippet bounds a snippet in bytes; longer sentences are cut at a word.
const maxSnippet = 240

// snippet returns the sentence of the fact that shares the most terms with
// the query (the first sentence on a tie), or of the description when the
// fact has no match.
func snippet(d Doc, terms []string) string {
	// A sentence scores one per query term it holds, by stem or by a
	// morphological variant, as the ranking counts them.
	matches := func(s string) int {
		n := 0
		have := Terms(s)
		for _, q := range terms {
			for _, t := range have {
				if t == q || isVariant(q, t) {
					n++
					break
				}
			}
		}
		return n
	}
	for _, text := range []string{d.Fact, d.Description} {
		best, bestN := "", 0
		for _, s := range sentences(text) {
			n := matches(s)
			if best == "" || n > bestN {
				best, bestN = s, n
			}
		}
		if bestN > 0 {
			return clip(best)
		}
	}
	if s := sentences(d.Fact); len(s) > 0 {
		return clip(s[0])
	}
	return clip(strings.TrimSpace(d.Description))
}

// sentences splits text at sentence ends (. ! ? followed by space) and at
// line breaks, dropping empty pieces and markdown list markers.
func sentences(text string) []string {
	var out []string
	add := func(s string) {
		s = strings.TrimSpace(s)
		s = strings.TrimLeft(s, "-*• ")
		if s != "" {
			out = append(out, s)
		}
	}
	for _, line := range strings.Split(text, "\n") {
		start := 0
		for i := 0; i < len(line); i++ {
			switch line[i] {
			case '.', '!', '?':
				if i+1 == len(line) || line[i+1] == ' ' {
					add(line[start : i+1])
					start = i + 1
				}
			}
		}
		add(line[start:])
	}
	return out
}

func clip(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= maxSnippet {
		return s
	}
	cut := strings.LastIndexByte(s[:maxSnippet], ' ')
	if cut <= 0 {
		cut = maxSnippet
		for cut > 0 && s[cut]&0xC0 == 0x80 { // do not split a UTF-8 sequence
			cut--
		}
	}
	return s[:cut] + "…"
}
