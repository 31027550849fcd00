package host

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
)

// Errors of Host a caller may tell apart.
var (
	// ErrBadID: the string is not a user ID (see ValidID).
	ErrBadID = errors.New("invalid user id")
	// ErrUnknownUser: no such user under ROOT.
	ErrUnknownUser = errors.New("unknown user")
)

// MaxIDLen is the longest user ID.
const MaxIDLen = 64

// ValidID is the one user-ID grammar: lowercase ASCII letters, digits, '.',
// '_' and '-', a letter or digit first, at most 64 bytes. An ID is the name
// of its repository's directory as it is: no case folding and no
// replacement of characters, so two valid IDs never share a repository
// (alice.bob and alice_bob are two users), and nothing can climb out of
// ROOT/users ("..", "/", NUL) or hide (a leading dot).
func ValidID(id string) error {
	if id == "" {
		return fmt.Errorf("%w: empty", ErrBadID)
	}
	if len(id) > MaxIDLen {
		return fmt.Errorf("%w: %d bytes, at most %d", ErrBadID, len(id), MaxIDLen)
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		switch {
		case 'a' <= c && c <= 'z', '0' <= c && c <= '9':
		case (c == '.' || c == '_' || c == '-') && i > 0:
		case 'A' <= c && c <= 'Z':
			return fmt.Errorf("%w %q: upper case is not allowed (use lower case letters, digits, '.', '_', '-')", ErrBadID, id)
		case i == 0 && (c == '.' || c == '_' || c == '-'):
			return fmt.Errorf("%w %q: must start with a letter or digit", ErrBadID, id)
		default:
			return fmt.Errorf("%w %q: character %q at %d is not allowed (use lower case letters, digits, '.', '_', '-')", ErrBadID, id, c, i)
		}
	}
	return nil
}

// IDFor maps a client's user ID, any string (serve --auto-users takes the
// reference server's, which may be "Alice", "42" or an e-mail address), to
// a user ID. One that is already valid and has no "--" is itself; any
// other becomes its lower-cased, valid characters (at most 40 bytes), "--"
// and 16 hex digits of its SHA-256. The map is one-to-one: the two forms
// never meet (only derived IDs hold "--"), and two strings share a derived
// ID only if their hashes collide in 64 bits. It never folds case or
// replaces a character in place, so "alice.bob" and "alice_bob" stay two
// users, and "Alice" is not "alice".
func IDFor(client string) string {
	if ValidID(client) == nil && !strings.Contains(client, "--") {
		return client
	}
	var b strings.Builder
	for _, r := range strings.ToLower(client) {
		if b.Len() >= 40 {
			break
		}
		switch {
		case 'a' <= r && r <= 'z', '0' <= r && r <= '9':
			b.WriteRune(r)
		case (r == '.' || r == '_' || r == '-') && b.Len() > 0:
			b.WriteRune(r)
		}
	}
	// "--" inside the prefix would make the split ambiguous to a reader,
	// and a trailing separator would give "---".
	prefix := b.String()
	for strings.Contains(prefix, "--") {
		prefix = strings.ReplaceAll(prefix, "--", "-")
	}
	prefix = strings.Trim(prefix, ".-_")
	if prefix == "" {
		prefix = "u"
	}
	sum := sha256.Sum256([]byte(client))
	return prefix + "--" + hex.EncodeToString(sum[:8])
}
