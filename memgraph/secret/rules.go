package secret

import (
	"regexp"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// lazyRE is a regular expression compiled on first use: compiling all of
// mindmount's rules took 27 ms at the start of every mindmount process
// (GODEBUG=inittrace=1), the pre-commit hook's included, while a text runs
// only the rules whose keywords it holds.
type lazyRE struct {
	pattern string
	once    sync.Once
	re      *regexp.Regexp
}

func lazy(pattern string) *lazyRE { return &lazyRE{pattern: pattern} }

// get compiles the pattern once; the patterns are constants, compiled by
// TestRulesCompile, so MustCompile cannot fail here.
func (l *lazyRE) get() *regexp.Regexp {
	l.once.Do(func() { l.re = regexp.MustCompile(l.pattern) })
	return l.re
}

// mindmountRule finds a secret by shape; group is the submatch that is the
// value (0: the whole match), and keep, when set, vetoes a match that is
// prose rather than a secret.
type mindmountRule struct {
	id       string
	keywords []string // lower-case; the regexp runs only when one occurs (as gitleaks does)
	re       *lazyRE
	group    int
	keep     func(value string, sub []string) bool
}

// mindmountRules complement gitleaks for text people type into a chat. Each
// is broader than gitleaks' rule for the same family on purpose: in a
// memory repository a false positive costs a marker, a miss leaks a secret.
var mindmountRules = []mindmountRule{
	// A pasted key, with or without its END line (a chat message cut short).
	{id: "mindmount-private-key", keywords: []string{"private key"}, re: lazy(`-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----[\s\S]*?(?:-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|$)`)},
	// OpenAI-style and similar "sk-…" keys, without gitleaks' T3BlbkFJ marker.
	{id: "mindmount-api-key", keywords: []string{"sk-", "rk-", "pk-"}, re: lazy(`\b(?:sk|rk|pk)-(?:[A-Za-z0-9]+-)*[A-Za-z0-9_\-]{16,}`)},
	// AWS key IDs, the documented AKIA…EXAMPLE ones included.
	{id: "mindmount-aws-access-key", keywords: []string{"akia", "asia", "abia", "acca"}, re: lazy(`\b(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}\b`)},
	{id: "mindmount-github-token", keywords: []string{"ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"}, re: lazy(`\b(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{30,}|\bgithub_pat_[A-Za-z0-9_]{30,}`)},
	{id: "mindmount-google-api-key", keywords: []string{"aiza"}, re: lazy(`\bAIza[0-9A-Za-z_\-]{35}`)},
	{id: "mindmount-slack-token", keywords: []string{"xox"}, re: lazy(`\bxox[abposr]-[A-Za-z0-9\-]{10,}`)},
	{id: "mindmount-gitlab-token", keywords: []string{"glpat-"}, re: lazy(`\bglpat-[A-Za-z0-9_\-]{20,}`)},
	{id: "mindmount-stripe-key", keywords: []string{"_live_", "_test_", "_prod_"}, re: lazy(`\b(?:sk|rk|pk)_(?:live|test|prod)_[A-Za-z0-9]{10,}`)},
	{id: "mindmount-huggingface-token", keywords: []string{"hf_"}, re: lazy(`\bhf_[A-Za-z0-9]{30,}`)},
	{id: "mindmount-npm-token", keywords: []string{"npm_"}, re: lazy(`\bnpm_[A-Za-z0-9]{36}\b`)},
	{id: "mindmount-jwt", keywords: []string{"eyj"}, re: lazy(`\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}`)},
	{id: "mindmount-bearer-token", keywords: []string{"bearer"}, re: lazy(`(?i)\bbearer\s+([A-Za-z0-9._~+/\-]{16,}=*)`), group: 1},
	// https://user:password@host: the credentials, not the host.
	// The user may be empty: redis://:password@host, amqp://:pw@…
	{id: "mindmount-url-credentials", keywords: []string{"://"}, re: lazy(`\b[a-z][a-z0-9+.\-]*://([^/\s:@]*:[^/\s@]+)@`), group: 1},
	// "password: x", "my password is x", "the PIN for my card is 1234":
	// the label stays, the value goes.
	{id: "mindmount-password", keywords: labelKeywords, re: labelledRE, group: 3, keep: labelledSecret},
	// "the secret key is …", "my AWS access key: …": a key named by a
	// word before it. A bare "key" is too common a word ("the key is
	// patience"), so the value must look like one.
	{id: "mindmount-named-key", keywords: []string{"key"}, re: namedKeyRE, group: 2, keep: keyLike},
	// "I use hunter2 as my password", "using 4711 as the PIN".
	{id: "mindmount-password", keywords: []string{"as my", "as the", "as our", "as a"}, re: useAsRE, group: 1, keep: func(v string, sub []string) bool {
		if notASecretNoun[strings.ToLower(strings.TrimSpace(sub[3]))] {
			return false
		}
		return labelledSecret(v, []string{"", sub[2]})
	}},
	// Password and PIN phrasings in German, Spanish, French, Portuguese
	// and Italian: "mein Passwort ist …", "mi contraseña es …", "mon mot
	// de passe est …", "minha senha é …", "il mio PIN è …".
	{id: "mindmount-password", keywords: intlKeywords, re: intlRE, group: 3, keep: intlSecret},
	// The same in Dutch, Swedish, Polish and Russian: "mijn wachtwoord is
	// …", "lösenordet till banken är …", "hasło do banku to …", "пароль
	// от почты — …"; and Turkish: "şifrem: …", "banka şifrem 4711".
	{id: "mindmount-password", keywords: intl2Keywords, re: intl2RE, group: 3, keep: intl2Secret},
	{id: "mindmount-password", keywords: turkishKeywords, re: turkishRE, group: 3, keep: intl2Secret},
	// A Google service account's key ID ("private_key_id": "4f…"), as a
	// model echoes it from a pasted JSON key file.
	{id: "mindmount-gcp-private-key-id", keywords: []string{"private"}, re: lazy(`(?i)\bprivate[ _\-]?key[ _\-]?id\b["']?\s*(?:is|was|=|:|->)\s*["']?([0-9a-f]{40})\b`), group: 1},
	// 13-19 digits, plain or in the groups cards are printed in (4-4-4-4,
	// 4-6-5 and the like); Luhn decides. Groups keep a leading "1 " (a PIN,
	// a count) from hiding the card number after it.
	{id: "mindmount-card-number", keywords: digits, re: lazy(`\b(?:\d{13,19}|\d{4}(?:[ \-]\d{4}){2}[ \-]\d{1,7}|\d{4}[ \-]\d{6}[ \-]\d{4,5})\b`), keep: func(v string, _ []string) bool {
		return luhn(strings.NewReplacer(" ", "", "-", "").Replace(v))
	}},
}

var labelledRE = lazy(`(?i)\b(password|passwd|passphrase|passcode|pwd|pw|pin|secret|api[ _\-]?key|access[ _\-]?token|auth[ _\-]?token|token|private[ _\-]?key|cvv|cvc|security code)((?:\s+for(?:\s+[^\s:=]{1,40}){1,3}?)?\s*(?:is|was|=|:|->)\s*)("[^"\n]{1,200}"|'[^'\n]{1,200}'|[^\s"',;]{1,200})`)

var namedKeyRE = lazy(`(?i)\b(?:secret|access|api|private|signing|encryption|license|licence|master|client|app|aws|stripe|openai|github|ssh|gpg|pgp|recovery)(?:[ _\-](?:access|secret|api|private))?[ _\-]?key((?:\s+for\s+[^\s:=]{1,40})?\s*(?:is|was|=|:|->)\s*)("[^"\n]{1,200}"|'[^'\n]{1,200}'|[^\s"',;]{1,200})`)

// keyLike keeps a value that looks like key material rather than a word:
// at least 8 characters mixing digits or case, or 16 of anything but
// plain lower-case letters.
func keyLike(v string, _ []string) bool {
	v = strings.Trim(strings.Trim(v, `"'`), ".!?")
	if len(v) < 8 || strings.HasPrefix(v, markerPrefix) {
		return false
	}
	var lower, upper, digit int
	for _, r := range v {
		switch {
		case r >= 'a' && r <= 'z':
			lower++
		case r >= 'A' && r <= 'Z':
			upper++
		case r >= '0' && r <= '9':
			digit++
		}
	}
	return digit > 0 && (lower+upper) > 0 || upper > 0 && lower > 0 && len(v) >= 12
}

var useAsRE = lazy(`(?i)\b(?:use|used|uses|using)\s+("[^"\n]{1,200}"|'[^'\n]{1,200}'|[^\s"',;]{1,200})\s+as\s+(?:my|the|our|a)\s+(?:\w+\s+){0,2}?(password|passphrase|passcode|pin|pwd)\b(\s+\w+)?`)

// notASecretNoun follows "password" in "… as my password manager": the
// value is a tool, not a password.
var notASecretNoun = map[string]bool{"manager": true, "managers": true, "app": true, "vault": true, "generator": true,
	"reset": true, "hint": true, "policy": true, "field": true, "prompt": true, "store": true, "keeper": true}

// intlRE: a label, an optional "for …" (für, de, para, pour, per), a copula
// or colon (ist, lautet, es, est, é, è, =, :), the value.
var intlRE = lazy(`(?i)\b(passwort|kennwort|password|contraseña|contrasena|clave|mot de passe|mdp|senha|palavra-passe|parola d'ordine|pin-code|pincode|code pin|codice pin|código pin|codigo pin|pin)((?:\s+(?:für|fuer|vom|von|de|del|du|para|pour|per|do|da|della|dello)(?:\s+[^\s:=]{1,40}){1,3}?)?(?:\s+(?:ist|lautet|war|était|etait|est|era|es|é|è)\s+|\s*[=:]\s*))("[^"\n]{1,200}"|'[^'\n]{1,200}'|«\s*[^»\n]{1,200}»|„[^“\n]{1,200}“|[^\s"',;«»„“]{1,200})`)

var intlKeywords = []string{"passwort", "kennwort", "password", "contraseña", "contrasena", "clave", "mot de passe", "mdp", "senha", "palavra-passe", "parola d'ordine", "pin"}

// intlSecret keeps a password value unless it is a marker; a PIN must
// hold a digit, and "clave" (also "key, essential") a value that is not
// an ordinary word.
func intlSecret(v string, sub []string) bool {
	v = strings.TrimSpace(strings.Trim(v, `"'«»„“`))
	if v == "" || strings.HasPrefix(v, markerPrefix) {
		return false
	}
	label := strings.ToLower(sub[1])
	switch {
	case strings.Contains(label, "pin"):
		return strings.ContainsAny(v, "0123456789")
	case label == "clave":
		return !isCommonWord(strings.TrimRight(v, ".!?"))
	}
	return true
}

// intl2RE: a label, an optional "for …" (voor, van, till, för, do, od,
// от, для), a copula, colon or dash (is, är, to, jest, это, —), the
// value; or the label and the value alone ("пароль qwerty123"), which
// intl2Secret keeps only when the value looks like one. Go's \b knows only
// ASCII letters, so the label starts after anything but a letter or digit.
var intl2RE = lazy(`(?i)(?:^|[^\p{L}\p{N}_])(wachtwoord|paswoord|wachtzin|pincode|lösenordet|lösenord|losenordet|losenord|pinkoden|pinkod|pin-koden|pin-kod|hasło|haslo|kod pin|пароль|пин-код|пин код|код доступа)((?:(?:\s+(?:voor|van|till|för|for|do|od|от|для)(?:\s+[^\s:=]{1,40}){1,3}?)?(?:\s+(?:is|was|är|var|to|jest|brzmi|это|был|была|было)\s+|\s*[=:]\s*|\s+[—–-]\s*))|(?:\s+[^\s:=]{1,40}){1,2}?\s*[=:]\s*|\s+)("[^"\n]{1,200}"|'[^'\n]{1,200}'|«\s*[^»\n]{1,200}»|„[^“”\n]{1,200}[“”]|[^\s"',;«»„“”]{1,200})`)

var intl2Keywords = []string{"wachtwoord", "paswoord", "wachtzin", "pincode", "lösenord", "losenord", "pinkod", "pin-kod", "hasło", "haslo", "kod pin", "пароль", "пин", "код доступа"}

// turkishRE: "şifrem: …", "parolam şu: …", "pin kodum 4711" (Turkish puts
// no copula between the two).
var turkishRE = lazy(`(?i)(?:^|[^\p{L}\p{N}_])(şifrem|şifremiz|şifresi|şifre|sifrem|sifresi|sifre|parolam|parolası|parolasi|parola|pin kodum|pin kodu|pinim)(\s*[=:]\s*|\s+(?:şu|şöyle|su)\s*:?\s*|\s+)("[^"\n]{1,200}"|'[^'\n]{1,200}'|[^\s"',;]{1,200})`)

var turkishKeywords = []string{"şifre", "sifre", "parola", "pin kod", "pinim"}

// intl2Secret keeps a value unless it is a marker; a PIN must hold a
// digit; a value after the label alone, with no copula or colon, must
// look like a password (four characters or more, one a digit), so "мой
// пароль забыт" and "şifremi unuttum" stay prose; and after a copula a
// lower-case word is taken for prose ("hasło jest tajne", "lösenordet är
// hemligt": the password is secret) — a colon or a dash still marks it.
func intl2Secret(v string, sub []string) bool {
	quoted := strings.ContainsAny(v[:1], `"'«„`)
	v = strings.TrimSpace(strings.Trim(v, `"'«»„“”`))
	if v == "" || strings.HasPrefix(v, markerPrefix) {
		return false
	}
	digit := strings.ContainsAny(v, "0123456789")
	conn := strings.TrimSpace(sub[2])
	if conn == "" && (!digit || utf8.RuneCountInString(v) < 4) {
		return false
	}
	if !quoted && conn != "" && !strings.ContainsAny(conn, "=:—–-") && lowerWord(strings.TrimRight(v, ".!?")) {
		return false
	}
	label := strings.ToLower(sub[1])
	if strings.Contains(label, "pin") || strings.Contains(label, "пин") {
		return digit
	}
	return true
}

// lowerWord reports whether v is one word of lower-case letters, in any
// script.
func lowerWord(v string) bool {
	if v == "" {
		return false
	}
	for _, r := range v {
		if !unicode.IsLower(r) {
			return false
		}
	}
	return true
}

// labelledSecret tells "the secret is patience" (prose) from "secret: x9".
func labelledSecret(v string, sub []string) bool {
	v = strings.Trim(v, `"'`)
	if v == "" || strings.HasPrefix(v, markerPrefix) {
		return false
	}
	switch strings.ToLower(sub[1]) {
	case "password", "passwd", "passphrase", "passcode", "pwd", "pw":
		// A password may well be an ordinary word.
		return true
	}
	return !isCommonWord(strings.TrimRight(v, ".!?"))
}

// labelKeywords are the labels of labelledRE, as keywords.
var labelKeywords = []string{"pass", "pw", "pin", "secret", "key", "token", "cvv", "cvc", "security code"}

// digits makes the card rule run only on text with a digit.
var digits = []string{"0", "1", "2", "3", "4", "5", "6", "7", "8", "9"}

func mindmountSpans(text string) []span {
	var out []span
	lower := strings.ToLower(text)
	for _, r := range mindmountRules {
		if !containsAny(lower, r.keywords) {
			continue
		}
		for _, m := range r.re.get().FindAllStringSubmatchIndex(text, -1) {
			s, e := m[2*r.group], m[2*r.group+1]
			if s < 0 {
				continue
			}
			if r.keep != nil {
				sub := make([]string, len(m)/2)
				for i := range sub {
					if m[2*i] >= 0 {
						sub[i] = text[m[2*i]:m[2*i+1]]
					}
				}
				if !r.keep(text[s:e], sub) {
					continue
				}
			}
			if q := text[s:e]; len(q) >= 2 && (q[0] == '"' || q[0] == '\'') && q[len(q)-1] == q[0] {
				s, e = s+1, e-1 // keep the quotes: "password: '[REDACTED:…]'"
			}
			out = append(out, span{start: s, end: e, rule: r.id})
		}
	}
	return out
}

func containsAny(s string, words []string) bool {
	for _, w := range words {
		if strings.Contains(s, w) {
			return true
		}
	}
	return false
}

// isCommonWord is a tiny guard against redacting ordinary prose after the
// weaker labels; real secrets rarely are short and all lower-case letters.
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
