package secret

import (
	"strings"
	"testing"
)

// The example values are split in two so that no secret scanner (gitleaks
// over this repository, a host's push protection) mistakes the test for a
// leak; they are random, not anybody's credentials.
var (
	stripeKey  = "sk_live_" + "u8jzPde0IgxLd6GncfBAepfJ"
	hfToken    = "hf_" + "BdKhoOOLdKLzdocJisAjIhKtJRlgLKOmxg"
	npmToken   = "npm_" + "9edn581u33xtplpft75v2seh60kvj50ce9uv"
	googleKey  = "AIza" + "S-6ilI8ihN5KXSc7Tvo-hBKqFYY-kv5ZJr3"
	slackToken = "xoxb-" + "846563212233-0792440268599-u8iS2G8NPRVdD53X83RZJzzz"
	gitlabPAT  = "glpat-" + "zgEOzdmenCkhvMdgaKjI"
	awsKey     = "AKIA" + "GXBENYJQWX6HH756"
	awsExample = "AKIA" + "IOSFODNN7EXAMPLE"
	ghToken    = "ghp_" + "x9Kd83hQpLm2Vb7Ns4Wt6Yr1Zc5Fg0Jh8Ea3"
	openaiKey  = "sk-proj-" + "EtfjgVvVqE1SkHbn88HxjSI6bWHtP3fS2qHx6kwXoIIXGvOoNZYW2mZp0zVZomHFwUbbYrEqmS" + "T3BlbkFJ" +
		"M9wCZ7Uw9xfogoEmvnEN5N1aE6PwZPf1Qh6yYTWmE4lBYOvfZ8UzDzV8fUkkibjL5DZPjN0MEQ"
	openaiShort = "sk-proj-" + "abcd1234efgh5678ijkl9012"
	jwt         = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9" + ".eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIn0.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
	pemBody     = "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7VJTUt9Us8cKj\n" +
		"Stqcbnr3yBdGBLEPH1qhT61qtc4xatws8phP9nhFyJfm5di4PzJ59FHz5r1pY4OjE2\n" +
		"jBMptUsGr7CmY+uCu3ZR1zTOlUcR64cXQLioDnkHIfxIq2HZt/PlJhx2jIclHkCiHp6b\n"
	pemKey = "-----BEGIN " + "PRIVATE KEY-----\n" + pemBody + "-----END PRIVATE KEY-----"
)

// TestFamilies is one example per rule family the issue names, each in a
// sentence as a person would type it.
func TestFamilies(t *testing.T) {
	cases := []struct {
		family, text, value string
	}{
		{"stripe", "the shop key is " + stripeKey + " for now", stripeKey},
		{"hugging face", "use " + hfToken + " to pull the model", hfToken},
		{"npm", "npm token " + npmToken + "\n", npmToken},
		{"pem private key", "here is my key:\n" + pemKey + "\nthanks", pemBody},
		{"pem private key without END", "my key:\n-----BEGIN RSA " + "PRIVATE KEY-----\n" + pemBody, pemBody},
		{"google", "maps key " + googleKey + " works", googleKey},
		{"slack", "bot " + slackToken + " posts", slackToken},
		{"gitlab", "CI uses " + gitlabPAT + " today", gitlabPAT},
		{"jwt", "session " + jwt + " expired", jwt},
		{"aws", "AWS " + awsKey + " here", awsKey},
		{"aws documented example", "AWS " + awsExample + " here", awsExample},
		{"openai", "key " + openaiKey + " ok", openaiKey},
		{"openai short", "my api key is " + openaiShort, openaiShort},
		{"password label", "Password: hunter2", "hunter2"},
		{"password prose", "the wifi password for home is Zebra-77", "Zebra-77"},
		{"quoted password", "Password: 'correct horse'", "correct horse"},
		{"card", "pay with 4111 1111 1111 1111 please", "4111 1111 1111 1111"},
		{"url credentials", "clone https://bob:s3cr3t@git.example.com/x", "s3cr3t"},
		{"bearer", "Authorization: Bearer abcdefghijklmnopqrstuvwxyz", "abcdefghijklmnopqrstuvwxyz"},
		{"github", "token ghp_" + "abcdefghijklmnopqrstuvwxyz0123456789", "ghp_abcdefghij"},
	}
	for _, tc := range cases {
		t.Run(tc.family, func(t *testing.T) {
			out, found := Redact(tc.text)
			if strings.Contains(out, tc.value) || strings.Contains(out, firstLine(tc.value)) {
				t.Errorf("value kept: %q", out)
			}
			if len(found) == 0 {
				t.Fatalf("nothing reported for %q", tc.text)
			}
			marker := Marker(found[0].Rule)
			if !strings.Contains(out, marker) {
				t.Errorf("no marker %q in %q", marker, out)
			}
			for _, f := range found {
				if strings.Contains(f.String(), tc.value) || f.Rule == "" || f.Line < 1 {
					t.Errorf("finding %q names the value or lacks rule/line", f)
				}
			}
			if !Contains(tc.text) || len(Find(tc.text)) != len(found) {
				t.Errorf("Find/Contains disagree with Redact")
			}
			if again, more := Redact(out); again != out || len(more) != 0 {
				t.Errorf("not idempotent: %q -> %q (%v)", out, again, more)
			}
		})
	}
}

func firstLine(s string) string { l, _, _ := strings.Cut(s, "\n"); return l }

// TestGitleaksRules proves the maintained rule set is in use: these values
// are found by gitleaks' own rules, named by its rule IDs.
func TestGitleaksRules(t *testing.T) {
	if n := Rules(); n < 150 {
		t.Fatalf("gitleaks default config gave %d rules", n)
	}
	for value, rule := range map[string]string{
		stripeKey:  "stripe-access-token",
		hfToken:    "huggingface-access-token",
		npmToken:   "npm-access-token",
		googleKey:  "gcp-api-key",
		slackToken: "slack-bot-token",
		gitlabPAT:  "gitlab-pat",
		awsKey:     "aws-access-token",
		openaiKey:  "openai-api-key",
		pemKey:     "private-key",
		jwt:        "jwt",
	} {
		var rules []string
		for _, s := range gitleaksSpans("x " + value + " y") {
			rules = append(rules, s.rule)
		}
		if !strings.Contains(strings.Join(rules, ","), rule) {
			t.Errorf("gitleaks rule %s did not find its example; got %v", rule, rules)
		}
	}
}

// TestMindmountRules checks each mindmount rule on its own, so that removing one
// is caught even where a gitleaks rule covers the same family.
func TestMindmountRules(t *testing.T) {
	examples := map[string]string{
		"mindmount-private-key":        "-----BEGIN OPENSSH " + "PRIVATE KEY-----\n" + pemBody,
		"mindmount-api-key":            openaiShort,
		"mindmount-aws-access-key":     awsExample,
		"mindmount-github-token":       "ghp_" + "abcdefghijklmnopqrstuvwxyz0123456789",
		"mindmount-google-api-key":     googleKey,
		"mindmount-slack-token":        slackToken,
		"mindmount-gitlab-token":       gitlabPAT,
		"mindmount-stripe-key":         stripeKey,
		"mindmount-huggingface-token":  hfToken,
		"mindmount-npm-token":          npmToken,
		"mindmount-jwt":                jwt,
		"mindmount-bearer-token":       "Bearer abcdefghijklmnopqrstuvwxyz",
		"mindmount-url-credentials":    "https://bob:s3cr3t@example.com/",
		"mindmount-password":           "password: hunter2",
		"mindmount-named-key":          "the secret key is wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
		"mindmount-card-number":        "4012-8888-8888-1881",
		"mindmount-gcp-private-key-id": `"private_key_id": "` + "4f2a9c1e0b7d" + "3a5e6f8091b2c4d7e8f90a1b2c3d" + `"`,
	}
	seen := map[string]bool{}
	for _, r := range mindmountRules {
		seen[r.id] = true
		ex, ok := examples[r.id]
		if !ok {
			t.Errorf("rule %s has no example", r.id)
			continue
		}
		found := false
		for _, s := range mindmountSpans("x " + ex + " y") {
			found = found || s.rule == r.id
		}
		if !found {
			t.Errorf("rule %s does not find %q", r.id, ex)
		}
	}
	for id := range examples {
		if !seen[id] {
			t.Errorf("example for unknown rule %s", id)
		}
	}
}

func TestProseIsKept(t *testing.T) {
	for _, clean := range []string{
		"I was born in 1987 and my phone is 0612345678.",
		"Order 1234567890123 arrived", // 13 digits, fails Luhn
		"The secret is patience.",
		"I forgot my password yesterday.",
		"I love the task-management app.",
		"You moved to Lisbon last month and work at a bakery.",
		"Answer in French, briefly, with code first.",
	} {
		if out, found := Redact(clean); out != clean || found != nil {
			t.Errorf("%q changed to %q (%v)", clean, out, found)
		}
	}
}

func TestLinesAndCount(t *testing.T) {
	text := "line one\npassword: hunter2\n\nkey " + stripeKey + "\n"
	found := Find(text)
	if len(found) != 2 || found[0].Line != 2 || found[1].Line != 4 {
		t.Fatalf("findings %v", found)
	}
	if c := Count(found); !strings.Contains(c, "1 mindmount-password") {
		t.Fatalf("count %q", c)
	}
}

func TestLuhn(t *testing.T) {
	for d, ok := range map[string]bool{"4111111111111111": true, "4111111111111112": false, "79927398713": false, "5555555555554444": true} {
		if luhn(d) != ok {
			t.Errorf("%s: %v", d, !ok)
		}
	}
}

func FuzzRedact(f *testing.F) {
	f.Add("password: x " + openaiShort + " 4111111111111111")
	f.Add("[REDACTED:x] token: [REDACTED")
	f.Add("-----BEGIN " + "PRIVATE KEY-----\nabc")
	f.Fuzz(func(t *testing.T, s string) {
		out, found := Redact(s)
		// Idempotent: a marker is never a secret.
		if again, more := Redact(out); again != out || len(more) != 0 {
			t.Fatalf("not idempotent: %q -> %q -> %q", s, out, again)
		}
		if len(found) == 0 && out != s {
			t.Fatalf("changed without findings: %q -> %q", s, out)
		}
		for _, f := range found {
			if f.Line < 1 || f.Line > strings.Count(s, "\n")+1 {
				t.Fatalf("line %d out of range", f.Line)
			}
		}
	})
}

func BenchmarkRedactChunk(b *testing.B) {
	text := strings.Repeat("User: I moved to Lisbon last month and my password is hunter2. The weather is nice.\n", 150)
	Redact(text) // build the detector
	b.SetBytes(int64(len(text)))
	b.ResetTimer()
	for range b.N {
		Redact(text)
	}
}

// BenchmarkRedactPlainChunk is the common case: a transcript chunk (about
// 12 KB) with no secret in it.
func BenchmarkRedactPlainChunk(b *testing.B) {
	text := strings.Repeat("User: I moved to Lisbon last month and I work at a bakery near the river.\n", 160)
	Redact(text)
	b.SetBytes(int64(len(text)))
	b.ResetTimer()
	for range b.N {
		Redact(text)
	}
}

// BenchmarkFindMemory is what the tracker pays per committed memory file.
func BenchmarkFindMemory(b *testing.B) {
	text := "---\ndescription: Lives in Lisbon\nstatus: active\ntopic: home-city\n---\n# Lives In Lisbon\n\n## Fact\nYou moved to Lisbon last month.\n\n## Episode\nSession 01.12.26.\n\n## Access log\nused, 01.12.26\n"
	Find(text)
	b.ResetTimer()
	for range b.N {
		Find(text)
	}
}

// TestAllowCommentIgnored: gitleaks skips lines marked "gitleaks:allow";
// in a memory repository nobody reviews such a line, so it is not obeyed.
func TestAllowCommentIgnored(t *testing.T) {
	var rules []string
	for _, s := range gitleaksSpans("key " + stripeKey + " # gitleaks:allow") {
		rules = append(rules, s.rule)
	}
	if !strings.Contains(strings.Join(rules, ","), "stripe-access-token") {
		t.Fatalf("gitleaks:allow was obeyed: %v", rules)
	}
}
