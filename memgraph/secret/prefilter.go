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

// needsGitleaks reports whether any gitleaks keyword occurs in text.
func needsGitleaks(text string) bool {
	return keywordTrie().MatchFirstString(strings.ToLower(text)) != nil
}
