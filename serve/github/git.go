package github

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
)

// ErrGit is a git command that failed; its message carries git's own
// words (never a token: remotes are given by the caller, and git's
// credential helpers keep theirs).
var ErrGit = errors.New("git failed")

// git runs git in dir with args and returns its standard output.
func git(ctx context.Context, dir string, args ...string) (string, error) {
	full := append([]string{"-C", dir, "-c", "core.hooksPath=/dev/null", "-c", "protocol.file.allow=always"}, args...)
	cmd := exec.CommandContext(ctx, "git", full...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	cmd.Env = append(cmd.Environ(), "GIT_TERMINAL_PROMPT=0")
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("%w: git %s: %s", ErrGit, args[0], scrub(strings.TrimSpace(errb.String())))
	}
	return out.String(), nil
}

// Redact is s with the user:password@ part of its URLs replaced by
// "***@": a remote named with a token can be printed.
func Redact(s string) string { return scrub(s) }

// scrub removes a user:password@ part of URLs from git's messages.
func scrub(s string) string {
	for _, scheme := range []string{"https://", "http://"} {
		for i := 0; ; {
			j := strings.Index(s[i:], scheme)
			if j < 0 {
				break
			}
			start := i + j + len(scheme)
			end := start
			for end < len(s) && !strings.ContainsRune(" /\n\t'\"", rune(s[end])) {
				end++
			}
			if at := strings.LastIndexByte(s[start:end], '@'); at >= 0 {
				s = s[:start] + "***@" + s[start+at+1:]
			}
			i = start
		}
	}
	return s
}
