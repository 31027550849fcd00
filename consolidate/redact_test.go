package consolidate

import (
	"strings"
	"testing"
)

func TestRedact(t *testing.T) {
	cases := []struct {
		in, secret, kind string
	}{
		{"my api key is sk-proj-abcdefghijklmnop1234567890", "abcdefghijklmnop1234567890", "api key"},
		{"token ghp_abcdefghijklmnopqrstuvwxyz0123456789", "ghp_abcdefghij", "api key"},
		{"AWS AKIAABCDEFGHIJKLMNOP here", "AKIAABCDEFGHIJKLMNOP", "api key"},
		{"my password is hunter2!", "hunter2", "password"},
		{"Password: 'correct horse'", "correct horse", "password"},
		{"the wifi password for home is Zebra-77", "Zebra-77", "password"},
		{"pay with 4111 1111 1111 1111 please", "4111 1111 1111 1111", "card number"},
		{"card 4012-8888-8888-1881", "4012-8888-8888-1881", "card number"},
		{"clone https://bob:s3cr3t@git.example.com/x", "s3cr3t", "credentials in a URL"},
		{"Authorization: Bearer abcdefghijklmnopqrstuvwxyz", "abcdefghijklmnopqrstuvwxyz", "token"},
	}
	for _, tc := range cases {
		out, found := Redact(tc.in)
		if strings.Contains(out, tc.secret) {
			t.Errorf("%q: secret kept: %q", tc.in, out)
		}
		if found[tc.kind] == 0 {
			t.Errorf("%q: kind %q not reported: %v", tc.in, tc.kind, found)
		}
		if !strings.Contains(out, redacted) {
			t.Errorf("%q: no placeholder: %q", tc.in, out)
		}
	}
	for _, clean := range []string{
		"I was born in 1987 and my phone is 0612345678.",
		"Order 1234567890123 arrived", // 13 digits, fails Luhn
		"The secret is patience.",
		"I forgot my password yesterday.",
		"I love the task-management app.",
	} {
		if out, found := Redact(clean); out != clean || found != nil {
			t.Errorf("%q changed to %q (%v)", clean, out, found)
		}
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
	f.Add("password: x sk-aaaaaaaaaaaaaaaaaaaa 4111111111111111")
	f.Fuzz(func(t *testing.T, s string) {
		out, _ := Redact(s)
		if again, found := Redact(out); again != out && found != nil {
			// Redaction must be idempotent: the placeholder is never a secret.
			if strings.Count(again, redacted) != strings.Count(out, redacted) {
				t.Fatalf("not idempotent: %q -> %q", out, again)
			}
		}
	})
}
