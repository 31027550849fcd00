package remote

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/mindmount/mindmount/memgraph/atomicfile"
)

// TokenEnv is the environment variable a token is read from first.
const TokenEnv = "MINDMOUNT_GIT_TOKEN"

// CredentialsEnv overrides the credentials file's path.
const CredentialsEnv = "MINDMOUNT_CREDENTIALS"

// DefaultCredentialsPath is where tokens are kept when not in the
// environment: $MINDMOUNT_CREDENTIALS, else $XDG_CONFIG_HOME/mindmount/credentials,
// else ~/.config/mindmount/credentials. It is outside every repository.
func DefaultCredentialsPath() string {
	if p := os.Getenv(CredentialsEnv); p != "" {
		return p
	}
	if d := os.Getenv("XDG_CONFIG_HOME"); d != "" {
		return filepath.Join(d, "mindmount", "credentials")
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return ""
	}
	return filepath.Join(home, ".config", "mindmount", "credentials")
}

// Credentials finds the token for a remote URL. The file holds one
// "URL-PREFIX TOKEN" per line ("#" comments); the longest prefix of the
// remote URL wins. It must be mode 0600 (or stricter): a token readable by
// others is refused rather than used.
type Credentials struct {
	// Token, when set, is used for every URL (an environment variable the
	// caller read, or a per-user token handed in by the HTTP API).
	Token string
	// Path is the credentials file ("" for none).
	Path string
}

// FromEnv is the CLI's credentials: $MINDMOUNT_GIT_TOKEN, then the default
// file.
func FromEnv() Credentials {
	return Credentials{Token: os.Getenv(TokenEnv), Path: DefaultCredentialsPath()}
}

// ErrCredentialsMode is returned for a credentials file others can read.
var ErrCredentialsMode = errors.New("credentials file is readable by others; run chmod 600 on it")

// Lookup returns the token for url, "" when there is none.
func (c Credentials) Lookup(url string) (string, error) {
	if c.Token != "" {
		return c.Token, nil
	}
	if c.Path == "" {
		return "", nil
	}
	f, err := os.Open(c.Path)
	if errors.Is(err, os.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("credentials file: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return "", err
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return "", fmt.Errorf("%s: %w", c.Path, ErrCredentialsMode)
	}
	best, tok := -1, ""
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Fields(line)
		if len(f) == 2 && strings.HasPrefix(url, f[0]) && len(f[0]) > best {
			best, tok = len(f[0]), f[1]
		}
	}
	return tok, nil
}

// Save records token for the URL prefix in the credentials file (created
// 0600, its directory 0700), replacing an earlier line for the same prefix.
func (c Credentials) Save(prefix, token string) error {
	if c.Path == "" {
		return errors.New("no credentials file path")
	}
	if strings.ContainsAny(prefix+token, " \n\r\t") || prefix == "" || token == "" {
		return errors.New("credentials: the URL and the token must be single words")
	}
	if err := os.MkdirAll(filepath.Dir(c.Path), 0o700); err != nil {
		return err
	}
	var keep []string
	if b, err := os.ReadFile(c.Path); err == nil {
		for _, l := range strings.Split(strings.TrimRight(string(b), "\n"), "\n") {
			if p, _, _ := strings.Cut(strings.TrimSpace(l), " "); l != "" && p != prefix {
				keep = append(keep, l)
			}
		}
	}
	keep = append(keep, prefix+" "+token)
	return atomicfile.WriteFile(c.Path, []byte(strings.Join(keep, "\n")+"\n"), 0o600)
}

// scrub removes secret from an error's text: go-git and HTTP servers
// quote what they were sent, and a token must never reach a log or status.
func scrub(err error, secret string) error {
	if err == nil || secret == "" || !strings.Contains(err.Error(), secret) {
		return err
	}
	return errors.New(strings.ReplaceAll(err.Error(), secret, "***"))
}
