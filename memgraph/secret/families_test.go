package secret

import (
	"strings"
	"testing"
)

// family is one detection family of issue 23, item 7: phrasings that hold
// a value (found, value removed) and ordinary sentences that look alike
// (kept as they are).
type family struct {
	name  string
	found []struct{ text, value string }
	kept  []string
}

var families = []family{
	{name: "URL credentials, empty user included",
		found: []struct{ text, value string }{
			{"cache at redis://:Zx81pQ7mK2@cache.internal:6379/0", "Zx81pQ7mK2"},
			{"queue amqp://:rabbitPw9@mq.example.com/vhost", "rabbitPw9"},
			{"amqp://guest:Gu3stPw!@localhost:5672/", "Gu3stPw!"},
			{"mongodb+srv://app:m0ng0Pw7@cluster0.ab1cd.mongodb.net/db", "m0ng0Pw7"},
			{"postgres://:pgSecret42@db:5432/app", "pgSecret42"},
		},
		kept: []string{"see https://example.com/docs", "mail me at ana@example.com", "redis://cache.internal:6379/0", "the url was http://localhost:8080/@me"},
	},
	{name: "secret / API key phrasings",
		found: []struct{ text, value string }{
			{"my secret key is wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"},
			{"The API key is 9f8e7d6c5b4a39281706f5e4d3c2b1a0", "9f8e7d6c5b4a39281706f5e4d3c2b1a0"},
			{"api key: Q2x9vLr7Tn4Wm8Kp", "Q2x9vLr7Tn4Wm8Kp"},
			{"aws secret access key = abcDEF123ghiJKL456mnoPQR789stuVWX0yzAB", "abcDEF123ghiJKL456mnoPQR789stuVWX0yzAB"},
			{"our signing key was 'k3y-Material-77x'", "k3y-Material-77x"},
		},
		kept: []string{"The key is patience.", "The secret key is consistency.", "the api key is in the vault", "The master key is under the mat.", "Your car key is on the hook."},
	},
	{name: "I use X as my password",
		found: []struct{ text, value string }{
			{"I use Tr0ub4dor as my password everywhere", "Tr0ub4dor"},
			{"I used 'correct horse battery' as my wifi password", "correct horse battery"},
			{"she is using 4711 as the PIN", "4711"},
			{"we use hunter2 as our passphrase", "hunter2"},
		},
		kept: []string{"I use a password manager.", "I use 1Password as my password manager.", "I used it as my excuse.", "use this as the pin of the map"},
	},
	{name: "German",
		found: []struct{ text, value string }{
			{"mein Passwort ist Sonnenblume77", "Sonnenblume77"},
			{"Das Kennwort lautet Zugspitze!", "Zugspitze!"},
			{"meine PIN ist 4821", "4821"},
			{"Passwort für das WLAN: hausnetz2024", "hausnetz2024"},
		},
		kept: []string{"Ich habe mein Passwort vergessen.", "Die PIN ist geheim.", "Mein Passwort-Manager ist gut."},
	},
	{name: "Spanish",
		found: []struct{ text, value string }{
			{"mi contraseña es Gato2024", "Gato2024"},
			{"La clave es X7f9Lq2", "X7f9Lq2"},
			{"mi PIN es 9931", "9931"},
			{"contraseña del banco: Tortilla#5", "Tortilla#5"},
		},
		kept: []string{"La clave es la paciencia.", "Olvidé mi contraseña ayer.", "mi PIN es secreto"},
	},
	{name: "French",
		found: []struct{ text, value string }{
			{"mon mot de passe est Baguette42", "Baguette42"},
			{"mot de passe : « Chat-Noir-9 »", "Chat-Noir-9"},
			{"mon code PIN est 2580", "2580"},
			{"le mdp du wifi est maison123", "maison123"},
		},
		kept: []string{"J'ai oublié mon mot de passe.", "Le code PIN est confidentiel."},
	},
	{name: "Portuguese",
		found: []struct{ text, value string }{
			{"minha senha é Saudade88", "Saudade88"},
			{"a senha do banco é pastel#1", "pastel#1"},
			{"meu PIN é 1357", "1357"},
			{"palavra-passe: Lisboa2026", "Lisboa2026"},
		},
		kept: []string{"Esqueci a minha senha.", "O PIN é pessoal."},
	},
	{name: "Italian",
		found: []struct{ text, value string }{
			{"il mio PIN è 2468", "2468"},
			{"la mia password è Gelato99", "Gelato99"},
			{"la parola d'ordine è Vesuvio7", "Vesuvio7"},
			{"codice PIN: 8642", "8642"},
		},
		kept: []string{"Ho dimenticato la password.", "Il PIN è personale."},
	},
}

// TestFamilies23 (issue 23, item 7): each family finds its phrasings and
// removes the value, and leaves the look-alike sentences alone.
func TestFamilies23(t *testing.T) {
	for _, f := range append(families, families34...) {
		for _, c := range f.found {
			out, found := Redact(c.text)
			if len(found) == 0 || strings.Contains(out, c.value) {
				t.Errorf("%s: %q -> %q (%v)", f.name, c.text, out, found)
			}
		}
		for _, k := range f.kept {
			if out, found := Redact(k); out != k {
				t.Errorf("%s: ordinary %q -> %q (%v)", f.name, k, out, found)
			}
		}
	}
}

// fuzzFamily checks that a value put into a family's phrasing is removed,
// whatever the value, as long as it looks like a secret (mixes letters and
// digits, at least 8 bytes, no spaces or quotes).
func fuzzFamily(f *testing.F, phrasings []string) {
	f.Add("Zx81pQ7mK2", 0)
	f.Add("a1b2c3d4e5", 1)
	f.Fuzz(func(t *testing.T, value string, which int) {
		if !secretShaped(value) {
			return
		}
		if which < 0 {
			which = -which
		}
		text := strings.ReplaceAll(phrasings[which%len(phrasings)], "VALUE", value)
		out, found := Redact(text)
		if len(found) == 0 || strings.Contains(out, value) {
			t.Fatalf("%q -> %q", text, out)
		}
		if again, _ := Redact(out); again != out {
			t.Fatalf("not idempotent: %q -> %q", out, again)
		}
	})
}

func secretShaped(v string) bool {
	if len(v) < 8 || len(v) > 64 {
		return false
	}
	var letter, digit bool
	for _, r := range v {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z':
			letter = true
		case r >= '0' && r <= '9':
			digit = true
		default:
			return false
		}
	}
	return letter && digit
}

func FuzzURLCredentials(f *testing.F) {
	fuzzFamily(f, []string{"redis://:VALUE@cache:6379", "amqp://:VALUE@mq/vhost", "mongodb+srv://app:VALUE@c.mongodb.net/x", "see postgres://u:VALUE@db/app now"})
}

func FuzzKeyPhrasings(f *testing.F) {
	fuzzFamily(f, []string{"my secret key is VALUE", "The API key is VALUE.", "api key: VALUE", "access key = VALUE"})
}

func FuzzUseAsPassword(f *testing.F) {
	fuzzFamily(f, []string{"I use VALUE as my password", "we used VALUE as the PIN", "using VALUE as our passphrase"})
}

func FuzzPasswordPhrasingsIntl(f *testing.F) {
	fuzzFamily(f, []string{"mein Passwort ist VALUE", "mi contraseña es VALUE", "mon mot de passe est VALUE", "minha senha é VALUE", "la mia password è VALUE", "Kennwort lautet VALUE"})
}
