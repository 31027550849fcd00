package memgraph

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// operatorHelper names the operator file the re-executed test reads, as
// the uid it was started with.
const operatorHelper = "MINDMOUNT_OPERATOR_HELPER"

// TestOperatorHelper is not a test of its own: TestOperatorSourceAsUser
// runs it as another uid, and it prints what that uid's worker would
// honour.
func TestOperatorHelper(t *testing.T) {
	p := os.Getenv(operatorHelper)
	if p == "" {
		t.Skip("run by TestOperatorSourceAsUser")
	}
	o, probs := (&OperatorSource{Path: p, Strict: true, RootOnly: true}).Get()
	fmt.Printf("uid=%d commit_secrets=%v problems=%d\n", os.Geteuid(), o.CommitSecrets, len(probs))
}

// TestOperatorSourceAsUser: a serve worker reads ROOT/config as the user,
// where Strict alone would honour a file the reader owns: RootOnly must
// refuse a file the user owns, read as that very user.
func TestOperatorSourceAsUser(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to run as another uid")
	}
	const uid = 2101
	dir, err := os.MkdirTemp("/tmp", "operator") // reachable by the uid, whatever TMPDIR is (CI's is 0700)
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	os.Chmod(dir, 0o755)
	self, err := os.ReadFile(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "memgraph.test")
	if err := os.WriteFile(bin, self, 0o755); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "config")
	if err := os.WriteFile(p, []byte("commit_secrets: true\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	run := func() string {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, bin, "-test.run=^TestOperatorHelper$")
		cmd.Dir = dir
		cmd.Env = []string{operatorHelper + "=" + p, "HOME=/nonexistent"}
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uid, Gid: uid}}
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("as uid %d: %v\n%s", uid, err, out)
		}
		return string(out)
	}
	if out := run(); !strings.Contains(out, fmt.Sprintf("uid=%d commit_secrets=true problems=0", uid)) {
		t.Fatalf("root's file, read by the user, is not honoured:\n%s", out)
	}
	if err := os.Chown(p, uid, uid); err != nil {
		t.Fatal(err)
	}
	if out := run(); !strings.Contains(out, fmt.Sprintf("uid=%d commit_secrets=false problems=1", uid)) {
		t.Fatalf("a file the user owns switched the user's own guard:\n%s", out)
	}
}

// TestOperatorSourceGroupWritable: an operator file its group may write
// is not the operator's alone: it counts for nothing.
func TestOperatorSourceGroupWritable(t *testing.T) {
	p := filepath.Join(t.TempDir(), "config")
	if err := os.WriteFile(p, []byte("commit_secrets: true\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	src := &OperatorSource{Path: p, Strict: true}
	if o, _ := src.Get(); !o.CommitSecrets {
		t.Fatal("the operator's file is not honoured")
	}
	if err := os.Chmod(p, 0o664); err != nil {
		t.Fatal(err)
	}
	if o, probs := src.Get(); o.CommitSecrets || len(probs) != 1 {
		t.Fatalf("a group-writable operator file is honoured: %+v %v", o, probs)
	}
}
