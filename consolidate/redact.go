package consolidate

import (
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// Redaction placeholder. The extraction prompt tells the model that this
// text was removed on purpose and must not be guessed.
const redacted = "[REDACTED]"

// secretPatterns find credentials by shape. Each is a well-known token
// format; names are what the log says was removed (never the value).
var secretPatterns = []struct {
	name string
	re   *regexp.Regexp
}{
	{"private key", regexp.MustCompile(`-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z ]*PRIVATE KEY-----|$)`)},
	{"api key", regexp.MustCompile(`\b(?:sk|rk|pk)-(?:[A-Za-z0-9]+-)*[A-Za-z0-9_\-]{16,}`)},
	{"api key", regexp.MustCompile(`\b(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{30,}|\bgithub_pat_[A-Za-z0-9_]{30,}`)},
	{"api key", regexp.MustCompile(`\b(?:AKIA|ASIA)[0-9A-Z]{16}\b`)},
	{"api key", regexp.MustCompile(`\bAIza[0-9A-Za-z_\-]{35}\b`)},
	{"api key", regexp.MustCompile(`\bxox[abposr]-[A-Za-z0-9\-]{10,}`)},
	{"api key", regexp.MustCompile(`\bglpat-[A-Za-z0-9_\-]{20,}`)},
	{"token", regexp.MustCompile(`\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}`)},
	{"token", regexp.MustCompile(`(?i)\bbearer\s+[A-Za-z0-9._~+/\-]{16,}=*`)},
	{"credentials in a URL", regexp.MustCompile(`\b[a-z][a-z0-9+.\-]*://[^/\s:@]+:[^/\s@]+@`)},
}

// labelled secrets: "password: x", "my password is x", "api_key=x",
// "the PIN for my card is 1234". The label is kept, the value removed.
var labelledRE = regexp.MustCompile(`(?i)\b(password|passwd|passphrase|passcode|pwd|pin|secret|api[ _\-]?key|access[ _\-]?token|auth[ _\-]?token|token|private[ _\-]?key|cvv|cvc|security code)((?:\s+for\s+[^\s:=]{1,40})?\s*(?:is|was|=|:|->)\s*)("[^"\n]{1,200}"|'[^'\n]{1,200}'|[^\s"',;]{1,200})`)

// cardRE finds 13-19 digit runs, optionally grouped by spaces or dashes;
// Luhn decides whether one is a card number.
var cardRE = regexp.MustCompile(`\b\d(?:[ \-]?\d){12,18}\b`)

// Redact removes secrets from s and returns the cleaned text and, per kind,
// how many were removed. The kinds are safe to log; the values never are.
func Redact(s string) (string, map[string]int) {
	found := map[string]int{}
	for _, p := range secretPatterns {
		s = p.re.ReplaceAllStringFunc(s, func(m string) string {
			found[p.name]++
			if p.name == "credentials in a URL" {
				i := strings.Index(m, "://")
				return m[:i+3] + redacted + "@"
			}
			return redacted
		})
	}
	s = labelledRE.ReplaceAllStringFunc(s, func(m string) string {
		sub := labelledRE.FindStringSubmatch(m)
		v := strings.Trim(sub[3], `"'`)
		if v == redacted || v == "" {
			return m
		}
		lw := strings.ToLower(sub[1])
		if (lw == "pin" || lw == "token" || lw == "secret") && isCommonWord(strings.TrimRight(v, ".!?")) {
			return m // "the secret is patience", "token is valid": prose
		}
		found["password"]++
		return sub[1] + sub[2] + redacted
	})
	s = cardRE.ReplaceAllStringFunc(s, func(m string) string {
		digits := strings.NewReplacer(" ", "", "-", "").Replace(m)
		if !luhn(digits) {
			return m
		}
		found["card number"]++
		return redacted
	})
	if len(found) == 0 {
		return s, nil
	}
	return s, found
}

// isCommonWord is a tiny guard against redacting ordinary prose after the
// weaker labels; real secrets rarely are all lower-case letters and short.
func isCommonWord(v string) bool {
	if len(v) > 12 {
		return false
	}
	for _, r := range v {
		if r < 'a' || r > 'z' {
			return false
		}
	}
	return true
}

// luhn reports whether a digit string passes the Luhn checksum.
func luhn(d string) bool {
	if len(d) < 13 || len(d) > 19 {
		return false
	}
	sum, alt := 0, false
	for i := len(d) - 1; i >= 0; i-- {
		n := int(d[i] - '0')
		if n < 0 || n > 9 {
			return false
		}
		if alt {
			n *= 2
			if n > 9 {
				n -= 9
			}
		}
		sum += n
		alt = !alt
	}
	return sum%10 == 0
}

// describeRedactions renders counts for the log: "2 api key, 1 password".
func describeRedactions(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = strconv.Itoa(m[k]) + " " + k
	}
	return strings.Join(parts, ", ")
}
