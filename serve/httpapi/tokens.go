package httpapi

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/mindmount/mindmount/memgraph/atomicfile"
	"github.com/mindmount/mindmount/serve/host"
)

// TokensFile is where a serve ROOT keeps its per-user tokens: beside
// users.json, outside every user's repository, mode 0600, and only as
// SHA-256 hashes — the file never holds a usable token.
const TokensFile = "tokens.json"

// tokensLock serialises edits of TokensFile (two mindmount users token
// commands at once must not lose a revocation).
const tokensLock = ".tokens.lock"

// tokenPrefix marks mindmount tokens, so a leaked one is recognisable.
const tokenPrefix = "mindmount_"

// ErrNoToken is returned by RevokeTokens when the token ID names no token
// of that user.
var ErrNoToken = errors.New("no such token")

type tokenEntry struct {
	ID     string `json:"id"`
	User   string `json:"user"`
	SHA256 string `json:"sha256"`
	// UserUUID is the registry entry's UUID when the token was made: a
	// user removed and added again is a new entry, and the old tokens
	// no longer match it.
	UserUUID string `json:"user_uuid,omitempty"`
	Created  string `json:"created"`
	// Scopes are what the token may do (Scope's names); an entry made
	// before tokens had scopes has none and is read and write.
	Scopes []string `json:"scopes,omitempty"`
}

type tokenFile struct {
	Tokens []tokenEntry `json:"tokens"`
}

// TokenInfo describes a token without its value: what mindmount users
// token list prints.
type TokenInfo struct {
	ID      string
	User    string
	Created time.Time
	Scope   Scope
	// Void is set when the token's user was removed (and maybe added
	// again): the token is refused.
	Void bool
}

// TokenStore answers which user a token belongs to. It re-reads the token
// file and the user registry when either changed on disk, so a token made
// or revoked with mindmount users token, and a user removed, take effect
// at the next request without a restart. It fails closed: a token file or
// registry it cannot read accepts no token.
type TokenStore struct {
	root string

	mu       sync.Mutex
	tokStamp [3]int64
	regStamp [3]int64
	loaded   bool
	broken   bool                  // the token file or registry could not be read
	byHash   map[string]tokenEntry // sha256 hex -> entry
	uuids    map[string]string     // registered user -> its entry's UUID
}

// OpenTokens returns the store of ROOT; a missing file is no tokens.
func OpenTokens(root string) *TokenStore {
	return &TokenStore{root: root}
}

func hashToken(tok string) string {
	h := sha256.Sum256([]byte(tok))
	return hex.EncodeToString(h[:])
}

// User returns the user of tok and what it may do: a token in the file
// whose user is still the registry entry it was issued for.
func (t *TokenStore) User(tok string) (string, Scope, bool) {
	e, ok := t.lookup(tok)
	if !ok {
		return "", 0, false
	}
	return e.User, scopeOf(e.Scopes), true
}

// lookup is User's entry: the token's ID, user and scopes.
func (t *TokenStore) lookup(tok string) (tokenEntry, bool) {
	if t == nil || !strings.HasPrefix(tok, tokenPrefix) {
		return tokenEntry{}, false
	}
	h := hashToken(tok)
	t.refresh()
	t.mu.Lock()
	defer t.mu.Unlock()
	e, ok := t.byHash[h]
	// The map is keyed by a hash of the token, so its lookup leaks
	// nothing about the token; the comparison below keeps the rule
	// "credentials are compared in constant time" true on its own.
	if !ok || subtle.ConstantTimeCompare([]byte(e.SHA256), []byte(h)) != 1 {
		return tokenEntry{}, false
	}
	return e, t.current(e)
}

// current reports whether e's user is still the registry entry it was
// issued for. t.mu is held.
func (t *TokenStore) current(e tokenEntry) bool {
	uuid, registered := t.uuids[e.User]
	return registered && subtle.ConstantTimeCompare([]byte(uuid), []byte(e.UserUUID)) == 1
}

// byID returns the entry of the token named id (re-reading the file when
// it changed), false when it was revoked or its user removed: what a web
// page session made from the token checks on each request.
func (t *TokenStore) byID(id string) (tokenEntry, bool) {
	if t == nil || id == "" {
		return tokenEntry{}, false
	}
	t.refresh()
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, e := range t.byHash {
		if e.ID == id {
			return e, t.current(e)
		}
	}
	return tokenEntry{}, false
}

// Count is the number of tokens in the file (void ones included).
func (t *TokenStore) Count() int {
	if t == nil {
		return 0
	}
	t.refresh()
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.byHash)
}

// Any reports whether credentials exist to be required: a token in the
// file, or a file that cannot be read (it may hold some).
func (t *TokenStore) Any() bool {
	if t == nil {
		return false
	}
	t.refresh()
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.byHash) > 0 || t.broken
}

// fileStamp is size, mtime and inode of path; zero when it is missing.
// The inode changes with every atomic replacement, so two writes within
// one mtime tick are still told apart.
func fileStamp(path string) [3]int64 {
	var st syscall.Stat_t
	if syscall.Stat(path, &st) != nil {
		return [3]int64{}
	}
	return [3]int64{st.Size, st.Mtim.Nano(), int64(st.Ino)}
}

// refresh re-reads the token file and the registry when either changed.
// Whatever cannot be read leaves no token usable (fail closed); its error
// is not logged, the file being secret-adjacent.
func (t *TokenStore) refresh() {
	tokPath := filepath.Join(t.root, TokensFile)
	tokStamp := fileStamp(tokPath)
	regStamp := fileStamp(filepath.Join(t.root, host.RegistryFile))
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.loaded && tokStamp == t.tokStamp && regStamp == t.regStamp {
		return
	}
	t.loaded, t.tokStamp, t.regStamp = true, tokStamp, regStamp
	t.byHash, t.uuids, t.broken = map[string]tokenEntry{}, map[string]string{}, true
	f, err := readTokens(tokPath)
	if err != nil {
		return
	}
	users, err := host.ReadRegistry(t.root)
	if err != nil {
		return
	}
	t.broken = false
	for _, e := range f.Tokens {
		t.byHash[e.SHA256] = e
	}
	for _, u := range users {
		t.uuids[u.ID] = u.UUID
	}
}

func readTokens(path string) (*tokenFile, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return &tokenFile{}, nil
	}
	if err != nil {
		return nil, err
	}
	var f tokenFile
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("%s is not a token file: %v", path, err)
	}
	for i, e := range f.Tokens {
		if e.ID == "" && len(e.SHA256) >= 8 {
			// Made before tokens had IDs: name it by its hash's start,
			// which tells nothing usable about the token.
			f.Tokens[i].ID = e.SHA256[:8]
		}
	}
	return &f, nil
}

// editTokens runs fn on the token file of root under its lock and writes
// the result atomically, mode 0600.
func editTokens(root string, fn func(f *tokenFile) error) error {
	lf, err := os.OpenFile(filepath.Join(root, tokensLock), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return err
	}
	defer lf.Close()
	if err := syscall.Flock(int(lf.Fd()), syscall.LOCK_EX); err != nil {
		return fmt.Errorf("lock %s: %w", tokensLock, err)
	}
	path := filepath.Join(root, TokensFile)
	f, err := readTokens(path)
	if err != nil {
		return err
	}
	if err := fn(f); err != nil {
		return err
	}
	sort.SliceStable(f.Tokens, func(i, j int) bool { return f.Tokens[i].User < f.Tokens[j].User })
	data, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.WriteFile(path, append(data, '\n'), 0o600)
}

// registered returns user's registry entry under root.
func registered(root, user string) (host.Entry, error) {
	users, err := host.ReadRegistry(root)
	if err != nil {
		return host.Entry{}, err
	}
	for _, u := range users {
		if u.ID == user {
			return u, nil
		}
	}
	return host.Entry{}, fmt.Errorf("%w %q under %s", host.ErrUnknownUser, user, root)
}

// NewToken makes a new token for user under root with DefaultScope (read
// and write: what an agent needs), bound to the user's registry entry,
// and returns it with its ID; the user's other tokens stay valid until
// revoked. Only its hash is stored.
func NewToken(root, user string, now time.Time) (tok, id string, err error) {
	return NewScopedToken(root, user, DefaultScope, now)
}

// NewScopedToken is NewToken for a token that may do what scope says.
func NewScopedToken(root, user string, scope Scope, now time.Time) (tok, id string, err error) {
	if scope == 0 {
		return "", "", errors.New("a token needs at least one scope")
	}
	scope = scope.withImplied()
	e, err := registered(root, user)
	if err != nil {
		return "", "", err
	}
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", "", err
	}
	var ib [4]byte
	if _, err := rand.Read(ib[:]); err != nil {
		return "", "", err
	}
	tok = tokenPrefix + base64.RawURLEncoding.EncodeToString(b[:])
	id = hex.EncodeToString(ib[:])
	err = editTokens(root, func(f *tokenFile) error {
		f.Tokens = append(f.Tokens, tokenEntry{ID: id, User: user, SHA256: hashToken(tok), UserUUID: e.UUID, Created: now.UTC().Format(time.RFC3339), Scopes: scope.Names()})
		return nil
	})
	if err != nil {
		return "", "", err
	}
	return tok, id, nil
}

// RevokeTokens removes user's token with ID id, or all of user's tokens
// when id is "". It returns how many were removed; naming a token the user
// does not have is ErrNoToken.
func RevokeTokens(root, user, id string) (int, error) {
	n := 0
	err := editTokens(root, func(f *tokenFile) error {
		kept := f.Tokens[:0]
		for _, e := range f.Tokens {
			if e.User == user && (id == "" || e.ID == id) {
				n++
				continue
			}
			kept = append(kept, e)
		}
		f.Tokens = kept
		if id != "" && n == 0 {
			return fmt.Errorf("%w %q for user %q", ErrNoToken, id, user)
		}
		return nil
	})
	return n, err
}

// ListTokens describes the tokens of root (of user, when not ""), never
// their values or hashes.
func ListTokens(root, user string) ([]TokenInfo, error) {
	f, err := readTokens(filepath.Join(root, TokensFile))
	if err != nil {
		return nil, err
	}
	users, err := host.ReadRegistry(root)
	if err != nil {
		return nil, err
	}
	uuids := map[string]string{}
	for _, u := range users {
		uuids[u.ID] = u.UUID
	}
	var out []TokenInfo
	for _, e := range f.Tokens {
		if user != "" && e.User != user {
			continue
		}
		created, _ := time.Parse(time.RFC3339, e.Created)
		uuid, ok := uuids[e.User]
		out = append(out, TokenInfo{ID: e.ID, User: e.User, Created: created, Scope: scopeOf(e.Scopes), Void: !ok || uuid != e.UserUUID})
	}
	return out, nil
}
