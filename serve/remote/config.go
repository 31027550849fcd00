package remote

import (
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/go-git/go-git/v5/config"
)

// Name is the git remote mindmount syncs with.
const Name = "origin"

// ErrNoRemote means the repository has no remote to sync with.
var ErrNoRemote = errors.New(`no remote configured; run "mindmount remote set REPO URL"`)

// CheckURL accepts any git URL (https://, ssh://, git@host:path, file://,
// a local path) that carries no password: a token in a URL would land in
// .git/config and in every error git prints.
func CheckURL(raw string) error {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return errors.New("empty remote URL")
	}
	if strings.ContainsAny(raw, "\n\r\x00") {
		return errors.New("remote URL holds a line break")
	}
	if u, err := url.Parse(raw); err == nil && u.User != nil {
		if _, has := u.User.Password(); has || u.Scheme == "http" || u.Scheme == "https" {
			return fmt.Errorf("remote URL holds credentials; give the URL without them and put the token in $%s or %s", TokenEnv, DefaultCredentialsPath())
		}
	}
	return nil
}

// SetURL makes raw the repository's sync remote.
func SetURL(dir, raw string) error {
	if err := CheckURL(raw); err != nil {
		return err
	}
	repo, err := open(dir)
	if err != nil {
		return err
	}
	cfg, err := repo.Config()
	if err != nil {
		return err
	}
	cfg.Remotes[Name] = &config.RemoteConfig{
		Name:  Name,
		URLs:  []string{strings.TrimSpace(raw)},
		Fetch: []config.RefSpec{config.RefSpec("+refs/heads/*:refs/remotes/" + Name + "/*")},
	}
	return repo.SetConfig(cfg)
}

// URL returns the sync remote's URL, or ErrNoRemote.
func URL(dir string) (string, error) {
	repo, err := open(dir)
	if err != nil {
		return "", err
	}
	cfg, err := repo.Config()
	if err != nil {
		return "", err
	}
	rc, ok := cfg.Remotes[Name]
	if !ok || len(rc.URLs) == 0 {
		return "", ErrNoRemote
	}
	return rc.URLs[0], nil
}
