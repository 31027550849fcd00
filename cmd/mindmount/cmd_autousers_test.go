package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/mindmount/mindmount/serve/host"
)

// TestAutoUsersTwoProcesses (issue 27): two processes adding users at
// once under one ROOT never give two users one uid: the uid is picked
// under the registry lock, not from a registry read before the slow
// repository creation. Each child is this test binary running
// TestAutoUsersChild.
func TestAutoUsersTwoProcesses(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root (the repositories are handed to the picked uids)")
	}
	root := t.TempDir()
	var cmds []*exec.Cmd
	for _, id := range []string{"alice", "bob", "carol"} {
		cmd := exec.Command(os.Args[0], "-test.run", "^TestAutoUsersChild$")
		cmd.Env = append(os.Environ(), "MM_AUTOUSERS_ROOT="+root, "MM_AUTOUSERS_ID="+id)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds = append(cmds, cmd)
	}
	for _, c := range cmds {
		if err := c.Wait(); err != nil {
			t.Fatalf("child: %v", err)
		}
	}
	users, err := host.ReadRegistry(root)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[uint32]string{}
	for _, u := range users {
		if other, dup := seen[u.UID]; dup {
			t.Errorf("%s and %s share uid %d", other, u.ID, u.UID)
		}
		seen[u.UID] = u.ID
		if fi, err := os.Stat(filepath.Join(root, "users", u.ID)); err != nil || ownerUID(fi) != u.UID {
			t.Errorf("%s's repository is not owned by its uid %d: %v", u.ID, u.UID, err)
		}
	}
	if len(users) != 3 {
		t.Fatalf("registered: %v, want 3 users", users)
	}
}

// TestAutoUsersChild provisions one user; run by TestAutoUsersTwoProcesses.
func TestAutoUsersChild(t *testing.T) {
	root, id := os.Getenv("MM_AUTOUSERS_ROOT"), os.Getenv("MM_AUTOUSERS_ID")
	if root == "" {
		t.Skip("run by TestAutoUsersTwoProcesses")
	}
	uids, err := parseUIDRange("20000-20009")
	if err != nil {
		t.Fatal(err)
	}
	a := &autoUsers{root: root, uids: uids, reload: func() error { return nil }}
	if err := a.provision(context.Background(), id); err != nil {
		t.Fatal(err)
	}
}

func ownerUID(fi os.FileInfo) uint32 {
	uid, _ := host.FileOwner(fi)
	return uid
}
