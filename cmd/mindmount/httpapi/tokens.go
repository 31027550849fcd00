package httpapi

import (
	"crypto/rand"
	"crypto/sha256"
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
	"time"

	"github.com/mindmount/mindmount/memgraph/atomicfile"
)

// TokensFile is where a serve ROOT keeps its per-user tokens: beside
// users.json, outside every user's repository, mode 0600, and only as
// SHA-256 hashes — the file never holds a usable token.
const TokensFile = "tokens.json"

// tokenPrefix marks mindmount tokens, so a leaked one is recognisable.
const tokenPrefix = "mindmount_"

type tokenEntry struct {
	User    string `json:"user"`
	SHA256  string `json:"sha256"`
	Created string `json:"created"`
}

type tokenFile struct {
	Tokens []tokenEntry `json:"tokens"`
}

// TokenStore answers which user a token belongs to. It re-reads the file
// when it changed, so a token made with mindmount users token works at once.
type TokenStore struct {
	path string

	mu     sync.Mutex
	stamp  string
	byHash map[string]string // sha256 hex -> user
}

// OpenTokens returns the store of ROOT; a missing file is no tokens.
func OpenTokens(root string) *TokenStore {
	return &TokenStore{path: filepath.Join(root, TokensFile)}
}

func hashToken(tok string) string {
	h := sha256.Sum256([]byte(tok))
	return hex.EncodeToString(h[:])
}

// User returns the user of tok.
func (t *TokenStore) User(tok string) (string, bool) {
	if t == nil || !strings.HasPrefix(tok, tokenPrefix) {
		return "", false
	}
	t.refresh()
	t.mu.Lock()
	defer t.mu.Unlock()
	u, ok := t.byHash[hashToken(tok)]
	return u, ok
}

// Count is the number of tokens.
func (t *TokenStore) Count() int {
	if t == nil {
		return 0
	}
	t.refresh()
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.byHash)
}

// refresh re-reads the file when its size or time changed. A file that
// cannot be read keeps the tokens last read (and is logged by no one: the
// file's content is secret-adjacent and its error is not).
func (t *TokenStore) refresh() {
	fi, err := os.Stat(t.path)
	stamp := ""
	if err == nil {
		stamp = fmt.Sprintf("%d-%d", fi.Size(), fi.ModTime().UnixNano())
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if stamp == t.stamp && t.byHash != nil {
		return
	}
	f, err := readTokens(t.path)
	if err != nil {
		return
	}
	m := make(map[string]string, len(f.Tokens))
	for _, e := range f.Tokens {
		m[e.SHA256] = e.User
	}
	t.byHash, t.stamp = m, stamp
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
	return &f, nil
}

// NewToken makes a new token for user under root and returns it; it
// replaces the user's earlier tokens (rotation). Only its hash is stored.
func NewToken(root, user string, now time.Time) (string, error) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	tok := tokenPrefix + base64.RawURLEncoding.EncodeToString(b[:])
	path := filepath.Join(root, TokensFile)
	f, err := readTokens(path)
	if err != nil {
		return "", err
	}
	kept := f.Tokens[:0]
	for _, e := range f.Tokens {
		if e.User != user {
			kept = append(kept, e)
		}
	}
	f.Tokens = append(kept, tokenEntry{User: user, SHA256: hashToken(tok), Created: now.UTC().Format(time.RFC3339)})
	sort.SliceStable(f.Tokens, func(i, j int) bool { return f.Tokens[i].User < f.Tokens[j].User })
	data, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return "", err
	}
	if err := atomicfile.WriteFile(path, append(data, '\n'), 0o600); err != nil {
		return "", err
	}
	return tok, nil
}
