package host

import (
	"errors"
	"fmt"
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
