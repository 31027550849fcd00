package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestUsersToken: users --help lists the token subcommand; a token is
// printed once, listed by ID and date only, revoked one at a time or all
// at once; removing the user revokes its tokens.
func TestUsersToken(t *testing.T) {
	out, errOut, _ := runMindmount(t, "users", "--help")
	if !strings.Contains(out+errOut, "users token revoke ROOT ID") || !strings.Contains(out+errOut, "users token list ROOT") {
		t.Fatalf("users --help does not show token:\n%s%s", out, errOut)
	}
	root := t.TempDir()
	runCmd(t, "users", "add", root, "alice")
	tok1 := strings.TrimSpace(runCmd(t, "users", "token", root, "alice"))
	tok2 := strings.TrimSpace(runCmd(t, "users", "token", root, "alice"))
	if !strings.HasPrefix(tok1, "mindmount_") || tok1 == tok2 {
		t.Fatalf("tokens %q %q", tok1, tok2)
	}
	list := runCmd(t, "users", "token", "list", root)
	if strings.Count(list, "alice") != 2 || strings.Contains(list, tok1) || strings.Contains(list, tok2) {
		t.Fatalf("list:\n%s", list)
	}
	b, _ := os.ReadFile(filepath.Join(root, "tokens.json"))
	if strings.Contains(string(b), tok1) || strings.Contains(string(b), tok2) {
		t.Fatal("tokens.json holds a token")
	}
	if !strings.Contains(list, "read,write") {
		t.Fatalf("a new token's scope is not read,write:\n%s", list)
	}
	id := strings.Fields(strings.Split(list, "\n")[1])[0]
	// A reviewer's token: its scope is listed; an unknown scope is a
	// usage error.
	if tok := strings.TrimSpace(runCmd(t, "users", "token", root, "alice", "--scope", "review")); !strings.HasPrefix(tok, "mindmount_") {
		t.Fatalf("review token %q", tok)
	}
	if list := runCmd(t, "users", "token", "list", root, "alice"); !strings.Contains(list, "read,review") {
		t.Fatalf("the review token's scope is not listed:\n%s", list)
	}
	if _, errOut, code := runMindmount(t, "users", "token", root, "alice", "--scope", "admin"); code == 0 || !strings.Contains(errOut, "unknown scope") {
		t.Fatalf("--scope admin: %d %s", code, errOut)
	}
	if out := runCmd(t, "users", "token", "revoke", root, "alice", id); !strings.Contains(out, "1 token of alice revoked") {
		t.Fatalf("revoke one: %s", out)
	}
	if _, _, code := runMindmount(t, "users", "token", "revoke", root, "alice", id); code == 0 {
		t.Fatal("revoking a revoked token succeeded")
	}
	runCmd(t, "users", "token", root, "alice")
	if out := runCmd(t, "users", "token", root, "alice", "--revoke"); !strings.Contains(out, "3 tokens of alice revoked") {
		t.Fatalf("revoke all: %s", out)
	}
	runCmd(t, "users", "token", root, "alice")
	runCmd(t, "users", "remove", root, "alice")
	if list := runCmd(t, "users", "token", "list", root); strings.Contains(list, "alice") {
		t.Fatalf("a removed user's tokens are listed:\n%s", list)
	}
	if _, _, code := runMindmount(t, "users", "token", root, "alice"); code == 0 {
		t.Fatal("a token for an unknown user")
	}
}
