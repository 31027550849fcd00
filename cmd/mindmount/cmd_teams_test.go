package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/mindmount/mindmount/memgraph/team"
	"github.com/mindmount/mindmount/serve/host"
)

// TestTeamsCommands: teams add makes a team repository of the usual format
// (as root: its own uid, mode 0750), member sets and removes roles, list
// prints them, and the configuration is root's and writable by nobody
// else; one that another user may write is refused by every command.
func TestTeamsCommands(t *testing.T) {
	root := t.TempDir()
	runCmd(t, "teams", "add", root, "eng", "--uid-range", "2301-2400")
	runCmd(t, "teams", "add", root, "ops", "--uid", "2350")
	runCmd(t, "teams", "member", root, "eng", "alice", "--role", "write")
	runCmd(t, "teams", "member", root, "eng", "bob", "--role", "read")
	runCmd(t, "teams", "member", root, "eng", "bob", "--role", "maintain")
	runCmd(t, "teams", "member", root, "ops", "alice", "--role", "propose")
	out := runCmd(t, "teams", "list", root)
	for _, want := range []string{"alice=write bob=maintain", "ops", "alice=propose"} {
		if !strings.Contains(out, want) {
			t.Errorf("list lacks %q:\n%s", want, out)
		}
	}
	dir := filepath.Join(root, team.Dir, "eng")
	if !host.IsMindmountRepo(dir) {
		t.Fatalf("%s is not a mindmount repository", dir)
	}
	c, err := team.Load(root)
	if err != nil {
		t.Fatal(err)
	}
	if got := c.ForUser(root, "alice"); len(got) != 2 || got[0].Role != team.Write || got[1].Role != team.Propose {
		t.Fatalf("alice: %+v", got)
	}
	if os.Geteuid() == 0 {
		var st syscall.Stat_t
		syscall.Stat(dir, &st)
		if st.Uid != 2301 || st.Gid != 2301 || st.Mode&0o777 != 0o750 {
			t.Fatalf("team repository %d:%d %o, want 2301:2301 750", st.Uid, st.Gid, st.Mode&0o777)
		}
		if c.Teams["ops"].UID != 2350 {
			t.Fatalf("ops uid %d", c.Teams["ops"].UID)
		}
	}
	for _, bad := range [][]string{
		{"member", root, "nope", "alice", "--role", "read"},
		{"member", root, "eng", "alice", "--role", "owner"},
		{"member", root, "eng", "alice"},
		{"member", root, "eng", "carol", "--remove"},
		{"add", root, "eng"},
		{"add", root, "../x"},
	} {
		var o, e bytes.Buffer
		if code := run(append([]string{"teams"}, bad...), &o, &e); code == 0 {
			t.Errorf("teams %s: exit 0\n%s", strings.Join(bad, " "), o.String())
		}
	}
	runCmd(t, "teams", "member", root, "eng", "alice", "--remove")
	runCmd(t, "teams", "remove", root, "ops")
	c, _ = team.Load(root)
	if got := c.ForUser(root, "alice"); len(got) != 0 {
		t.Fatalf("alice after removal: %+v", got)
	}
	if !host.IsMindmountRepo(filepath.Join(root, team.Dir, "ops")) {
		t.Fatal("teams remove deleted the repository")
	}
	if os.Geteuid() != 0 {
		return
	}
	conf := filepath.Join(root, team.ConfigFile)
	os.Chmod(conf, 0o666)
	var o, e bytes.Buffer
	if code := run([]string{"teams", "member", root, "eng", "mallory", "--role", "maintain"}, &o, &e); code == 0 || !strings.Contains(e.String(), "writable by others") {
		t.Fatalf("a world-writable configuration was used: exit %d %s", code, e.String())
	}
}
