package host

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

func TestValidID(t *testing.T) {
	good := []string{"alice", "a", "0", "alice.bob", "alice_bob", "alice-bob", "a1.b2_c3-d4", strings.Repeat("a", MaxIDLen)}
	for _, id := range good {
		if err := ValidID(id); err != nil {
			t.Errorf("ValidID(%q) = %v, want nil", id, err)
		}
	}
	bad := map[string]string{
		"":                              "empty",
		".":                             "letter or digit",
		"..":                            "letter or digit",
		".hidden":                       "letter or digit",
		"-x":                            "letter or digit",
		"_x":                            "letter or digit",
		"a/b":                           "not allowed",
		"../etc":                        "letter or digit",
		"a\x00b":                        "not allowed",
		"Alice":                         "upper case",
		"aLice":                         "upper case",
		"al ice":                        "not allowed",
		"al\nice":                       "not allowed",
		"alicé":                         "not allowed",
		strings.Repeat("a", MaxIDLen+1): "at most 64",
	}
	for id, want := range bad {
		err := ValidID(id)
		if !errors.Is(err, ErrBadID) || !strings.Contains(err.Error(), want) {
			t.Errorf("ValidID(%q) = %v, want ErrBadID saying %q", id, err, want)
		}
	}
}

// FuzzValidID: a valid ID is one path element inside users/, never hidden,
// never folded onto another by case, and two distinct valid IDs name two
// distinct directories.
func FuzzValidID(f *testing.F) {
	for _, s := range []string{"alice", "alice.bob", "alice_bob", "..", "a/b", "Alice", "", "a\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, id string) {
		if ValidID(id) != nil {
			return
		}
		if len(id) == 0 || len(id) > MaxIDLen {
			t.Fatalf("%q accepted with length %d", id, len(id))
		}
		if strings.ToLower(id) != id {
			t.Fatalf("%q accepted with upper case", id)
		}
		dir := UserDir("/r", id)
		if filepath.Dir(dir) != "/r/users" || filepath.Base(dir) != id || strings.HasPrefix(id, ".") {
			t.Fatalf("%q escapes or hides: %s", id, dir)
		}
		if other := strings.ToUpper(id[:1]) + id[1:]; other != id && ValidID(other) == nil {
			t.Fatalf("%q and %q both valid", id, other)
		}
	})
}

// FuzzParseRegistry: whatever users.json holds, only valid, unique IDs
// come out, sorted.
func FuzzParseRegistry(f *testing.F) {
	f.Add([]byte(`{"users":[{"id":"alice","uid":1001,"gid":1001},{"id":"../x"},{"id":"alice"}]}`))
	f.Add([]byte(`{"users":null}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		users, err := parseRegistry(b)
		if err != nil {
			return
		}
		for i, u := range users {
			if ValidID(u.ID) != nil {
				t.Fatalf("invalid id %q returned", u.ID)
			}
			if i > 0 && users[i-1].ID >= u.ID {
				t.Fatalf("not sorted or not unique: %q, %q", users[i-1].ID, u.ID)
			}
		}
	})
}

// TestIDFor: a client's user ID maps to a valid ID; a valid one without
// "--" is itself, others keep what they can and a hash, so that IDs that
// differ only in case or punctuation stay apart.
func TestIDFor(t *testing.T) {
	same := []string{"alice", "alice.bob", "alice_bob", "42", "a-b"}
	for _, id := range same {
		if got := IDFor(id); got != id {
			t.Errorf("IDFor(%q) = %q, want itself", id, got)
		}
	}
	derived := map[string]string{
		"Alice":                  "alice--",
		"alice@example.com":      "aliceexample.com--",
		"../etc":                 "etc--",
		"a--b":                   "a-b--",
		"a---b":                  "a-b--",
		"":                       "u--",
		"日本":                     "u--",
		"-x":                     "x--",
		strings.Repeat("a", 100): strings.Repeat("a", 40) + "--",
	}
	seen := map[string]string{}
	for in, prefix := range derived {
		got := IDFor(in)
		if !strings.HasPrefix(got, prefix) || len(got) != len(prefix)+16 || ValidID(got) != nil {
			t.Errorf("IDFor(%q) = %q, want %q and 16 hex digits, a valid ID", in, got, prefix)
		}
		if o, ok := seen[got]; ok {
			t.Errorf("IDFor(%q) = IDFor(%q) = %q", in, o, got)
		}
		seen[got] = in
	}
	if IDFor("Alice") == IDFor("ALICE") || IDFor("Alice") == "alice" {
		t.Error("case folded")
	}
}

// FuzzIDFor: every string maps to a valid ID; two strings that map to one
// ID are equal (native IDs never hold "--", derived ones always do).
func FuzzIDFor(f *testing.F) {
	for _, s := range []string{"alice", "Alice", "a--b", "", "../x", "42", "alice--0123456789abcdef"} {
		f.Add(s, "alice")
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		ia, ib := IDFor(a), IDFor(b)
		if err := ValidID(ia); err != nil {
			t.Fatalf("IDFor(%q) = %q: %v", a, ia, err)
		}
		if ia == ib && a != b {
			t.Fatalf("IDFor(%q) = IDFor(%q) = %q", a, b, ia)
		}
		if native := ValidID(a) == nil && !strings.Contains(a, "--"); native != (ia == a) {
			t.Fatalf("IDFor(%q) = %q", a, ia)
		}
	})
}
