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
