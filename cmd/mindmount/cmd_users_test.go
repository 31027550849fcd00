package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mindmount/mindmount/serve/host"
)

// TestUsersAddRefusesSharedAndRootIDs: users add refuses uid 0, gid 0 and a
// uid or gid another user has; run as root without --uid it picks a free
// uid of --uid-range, never root's; users remove deletes the user's
// credentials folder in the same step.
func TestUsersAddRefusesSharedAndRootIDs(t *testing.T) {
	root := t.TempDir()
	runCmd(t, "users", "add", root, "alice", "--uid", "2101")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"rooty", "--uid", "0"}, "uid 0 and gid 0 are root's"},
		{[]string{"rootgroup", "--uid", "2150", "--gid", "0"}, "uid 0 and gid 0 are root's"},
		{[]string{"dupe", "--uid", "2101"}, "uid 2101 is another user's (alice)"},
		{[]string{"dupegroup", "--uid", "2151", "--gid", "2101"}, "gid 2101 is another user's (alice)"},
	} {
		var out, errb bytes.Buffer
		code := run(append([]string{"users", "add", root}, c.args...), &out, &errb)
		if code == 0 || !strings.Contains(errb.String(), c.want) {
			t.Errorf("users add %s: exit %d, want %q\n%s%s", strings.Join(c.args, " "), code, c.want, out.String(), errb.String())
		}
	}
	entries, _ := host.ReadRegistry(root)
	if len(entries) != 1 {
		t.Fatalf("registry after the refusals: %+v", entries)
	}
	if os.Geteuid() != 0 {
		return
	}
	out := runCmd(t, "users", "add", root, "nouid", "--uid-range", "2101-2200")
	entries, _ = host.ReadRegistry(root)
	var got host.Entry
	for _, e := range entries {
		if e.ID == "nouid" {
			got = e
		}
	}
	if got.UID != 2102 || got.GID != 2102 {
		t.Fatalf("users add without --uid as root: %+v (%s), want 2102:2102, the first free uid of the range", got, out)
	}
	// A removed user's credentials go with it.
	creds := filepath.Join(root, "credentials", "nouid")
	os.MkdirAll(creds, 0o700)
	os.WriteFile(filepath.Join(creds, "git"), []byte("https://github.com/ ghp_old\n"), 0o600)
	runCmd(t, "users", "remove", root, "nouid")
	if _, err := os.Lstat(creds); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("users remove left ROOT/credentials/nouid: %v", err)
	}
}

// TestAutoUsersSkipsUsedUIDs: --auto-users never hands out a uid a system
// account has (passwd) or one that owns a file at the top of ROOT (a
// removed user's credentials folder).
func TestAutoUsersSkipsUsedUIDs(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to give a folder to another uid")
	}
	root := t.TempDir()
	old := filepath.Join(root, "credentials", "gone")
	os.MkdirAll(old, 0o700)
	os.Chown(old, 65533, 65533)
	r, err := parseUIDRange("65533-65535")
	if err != nil {
		t.Fatal(err)
	}
	a := &autoUsers{root: root, uids: r, reload: func() error { return nil }}
	if err := a.provision(t.Context(), "eve"); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(filepath.Join(root, host.RegistryFile))
	var reg struct{ Users []host.Entry }
	json.Unmarshal(b, &reg)
	// 65533 owns the old folder and 65534 is nobody: 65535 is the one.
	if len(reg.Users) != 1 || reg.Users[0].UID != 65535 {
		t.Fatalf("auto-users gave %+v, want uid 65535", reg.Users)
	}
}
