package httpapi

import (
	"net/http"
	"testing"
	"time"

	"github.com/mindmount/mindmount/serve/host"
)

// TestPageSessionEndsWithItsCredential: a web page session made from a
// token lasts only as long as the token: once it is revoked (or its user
// removed) the next page request is sent to the login (303) and the
// session is gone for good, while a session made from another token of
// the same user goes on. A session of a loopback server that required no
// credentials ends when the server starts requiring them.
func TestPageSessionEndsWithItsCredential(t *testing.T) {
	cases := []struct {
		name string
		addr string
		// end ends the credential of the session under test.
		end func(t *testing.T, root, id string)
	}{
		{"token revoked", "0.0.0.0:0", func(t *testing.T, root, id string) {
			if n, err := RevokeTokens(root, "alice", id); err != nil || n != 1 {
				t.Fatalf("revoke: %d, %v", n, err)
			}
		}},
		{"user removed", "0.0.0.0:0", func(t *testing.T, root, _ string) {
			if err := host.RemoveUser(root, "alice"); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			for _, id := range []string{"alice", "bob"} {
				newUser(t, root, id, 0)
			}
			tok, id, err := NewToken(root, "alice", time.Now())
			if err != nil {
				t.Fatal(err)
			}
			other, _, err := NewToken(root, "bob", time.Now())
			if err != nil {
				t.Fatal(err)
			}
			f := newFront(t, root, "", tc.addr)
			c, code := f.login(tok)
			if code != http.StatusSeeOther {
				t.Fatalf("login: %d", code)
			}
			kept, _ := f.login(other)
			if code := f.call(c, "GET", "/ui/u/alice/", "", ""); code != 200 {
				t.Fatalf("page before: %d", code)
			}
			tc.end(t, root, id)
			if code := f.call(c, "GET", "/ui/u/alice/", "", ""); code != http.StatusSeeOther {
				t.Fatalf("page after its credential ended: %d, want 303 to the login", code)
			}
			if code := f.call(c, "GET", "/ui/u/alice/", "", ""); code != http.StatusSeeOther {
				t.Fatalf("page asked again: %d, want 303", code)
			}
			if code := f.call(kept, "GET", "/ui/u/bob/", "", ""); code != 200 {
				t.Fatalf("another token's session: %d, want 200", code)
			}
		})
	}

	t.Run("open server starts requiring credentials", func(t *testing.T) {
		root := t.TempDir()
		newUser(t, root, "alice", 0)
		f := newFront(t, root, "", "127.0.0.1:0")
		c, code := f.login("anything")
		if code != http.StatusSeeOther {
			t.Fatalf("login: %d", code)
		}
		if code := f.call(c, "GET", "/ui/u/alice/", "", ""); code != 200 {
			t.Fatalf("page before: %d", code)
		}
		if _, _, err := NewToken(root, "alice", time.Now()); err != nil {
			t.Fatal(err)
		}
		if code := f.call(c, "GET", "/ui/u/alice/", "", ""); code != http.StatusSeeOther {
			t.Fatalf("page once a token exists: %d, want 303", code)
		}
	})
}
