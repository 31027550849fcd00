package host

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/mindmount/mindmount/fs/gitrepo"
	"github.com/mindmount/mindmount/template"
)

// checkStatus judges a worker's ids as the kernel shows them: a worker
// that was root keeps no supplementary group, no capability, and has the
// user's ids in all four columns.
func TestCheckStatus(t *testing.T) {
	status := func(groups, capEff string) []byte {
		return []byte("Name:\tmindmount\nUid:\t2101\t2101\t2101\t2101\nGid:\t2101\t2101\t2101\t2101\nGroups:\t" + groups +
			"\nCapPrm:\t0000000000000000\nCapEff:\t" + capEff + "\n")
	}
	for _, c := range []struct {
		name    string
		b       []byte
		wasRoot bool
		want    string // "" : accepted
	}{
		{"dropped", status("", "0000000000000000"), true, ""},
		{"kept groups", status("0 27 100", "0000000000000000"), true, "Groups:"},
		{"one kept group", status("4", "0000000000000000"), true, "Groups:"},
		{"a capability", status("", "0000000000200000"), true, "CapEff:"},
		{"its teams' groups", status("3001 3002", "0000000000000000"), true, ""},
		{"a team group too many", status("3001 3002 3003", "0000000000000000"), true, "Groups:"},
		{"not root: its own groups stay", status("27", "0000000000000000"), false, ""},
		{"saved uid root", []byte("Uid:\t2101\t2101\t0\t2101\nGid:\t2101\t2101\t2101\t2101\nGroups:\t\nCapPrm:\t0000000000000000\nCapEff:\t0000000000000000\n"), true, "Uid:"},
		{"no Groups line", []byte("Uid:\t2101\t2101\t2101\t2101\nGid:\t2101\t2101\t2101\t2101\nCapPrm:\t0000000000000000\nCapEff:\t0000000000000000\n"), true, "missing"},
	} {
		var groups []uint32
		if strings.Contains(c.name, "team") {
			groups = []uint32{3001, 3002}
		}
		err := checkStatus(c.b, 2101, 2101, c.wasRoot, groups...)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: refused: %v", c.name, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: %v, want an error naming %s", c.name, err, c.want)
		}
	}
}

// DropPrivileges never makes a worker of uid 0: a worker never holds
// root's rights.
func TestDropPrivilegesRefusesRoot(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: only root could become uid 0")
	}
	if err := DropPrivileges(0, 0); !errors.Is(err, ErrRootWorker) {
		t.Fatalf("DropPrivileges(0, 0) as root: %v, want ErrRootWorker", err)
	}
}

// A user registered with uid 0 is refused at its worker's start, with a
// clear error, before any process or mount: a worker never holds root's
// rights.
func TestWorkersRefuseRootUser(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: only a root daemon could start a worker as uid 0")
	}
	root := t.TempDir()
	dir := UserDir(root, "dave")
	os.MkdirAll(dir, 0o755)
	if _, err := gitrepo.Init(dir); err != nil {
		t.Fatal(err)
	}
	if _, err := template.Write(dir, "dave", false); err != nil {
		t.Fatal(err)
	}
	if err := AddUser(root, Entry{ID: "dave", UID: 0, GID: 0}); err != nil {
		t.Skipf("the registry refuses uid 0 already: %v", err)
	}
	ws, err := NewWorkers(WorkersConfig{Root: root, Exe: "/nonexistent/mindmount"})
	if err != nil {
		t.Skipf("the registry refuses uid 0 already: %v", err)
	}
	defer ws.Close(context.Background())
	_, _, err = ws.Forward(context.Background(), "dave")
	if !errors.Is(err, ErrRootWorker) || !strings.Contains(err.Error(), "dave") {
		t.Fatalf("a worker for uid 0: %v, want ErrRootWorker naming the user", err)
	}
}
