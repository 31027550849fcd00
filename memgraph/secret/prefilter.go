package secret

import (
	"strings"
	"sync"

	ahocorasick "github.com/BobuSumisu/aho-corasick"
)

// gitleaks runs a rule only when one of its keywords occurs in the
// lower-cased text, and compiling its ~220 rules costs 0.1–0.3 s: more
// than the whole of a pre-commit hook's budget. So the same keyword test
// runs first, on keywords kept here (gitleaksKeywords, checked against
// the live configuration by TestGitleaksKeywordsCurrent), and the rules are
// compiled only for a text that could match one of them. Text with none
// of the keywords is scanned by mindmount's own rules alone, with the same
// result gitleaks would give.
var keywordTrie = sync.OnceValue(func() *ahocorasick.Trie {
	return ahocorasick.NewTrieBuilder().AddStrings(gitleaksKeywords).Build()
})

// shortText is the length up to which needsGitleaks tries each keyword in
// turn instead of building the trie: building it costs 15-60 ms, every
// memory's name is checked when a repository is opened, and a name is
// short; the trie pays off on content.
const shortText = 256

// accessLogHeading is how every memory's access log starts, lower-cased.
// Its "access" is a keyword of gitleaks' generic-api-key rule, the most
// costly of its rules to compile (about 90 ms), and the only keyword in
// it (TestAccessLogHeadingMasked). That rule's pattern cannot match at
// this "access": after it come at most 20 word characters or spaces on
// its line, at most 3 spaces or quotes, then one of = > : | ? , — and
// here " log", a newline and "used, " hold none of those. Any match of the
// rule elsewhere starts at one of its keywords (its pattern's words are
// all keywords), so not counting this occurrence changes no finding.
const accessLogHeading = "## access log\nused, "

// keywordText is the lower-cased text the keyword test reads: with the
// access log headings masked.
func keywordText(text string) string {
	lower := strings.ToLower(text)
	if strings.Contains(lower, accessLogHeading) {
		lower = strings.ReplaceAll(lower, accessLogHeading, "## ------ log\nused, ")
	}
	return lower
}

// needsGitleaks reports whether any gitleaks keyword occurs in text.
func needsGitleaks(text string) bool {
	lower := keywordText(text)
	if len(lower) <= shortText {
		for _, k := range gitleaksKeywords {
			if strings.Contains(lower, k) {
				return true
			}
		}
		return false
	}
	return keywordTrie().MatchFirstString(lower) != nil
}
