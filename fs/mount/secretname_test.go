package mount

import (
	"bytes"
	"log/slog"
	"os"
	"strings"
	"syscall"
	"testing"
)

// Issue 23, item 5: a file or folder name holding a secret is refused
// where it is made — create, mkdir, rename — with EINVAL, and the mount's
// log never shows it.
func TestSecretNameRefused(t *testing.T) {
	var logs bytes.Buffer
	tm := mountRepo(t, newRepo(t, nil), Options{Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	tok := "ghp_" + "x9Kd83hQpLm2Vb7Ns4Wt6Yr1Zc5Fg0Jh8Ea3"
	os.MkdirAll(tm.p("attachments"), 0o755)
	wantErrno(t, "create", os.WriteFile(tm.p("attachments/"+tok+".txt"), []byte("x"), 0o644), syscall.EINVAL)
	wantErrno(t, "mkdir", os.Mkdir(tm.p(tok), 0o755), syscall.EINVAL)
	tm.write("notes/plain.md", "# Plain\n")
	wantErrno(t, "rename", os.Rename(tm.p("notes/plain.md"), tm.p("notes/password-is-Hunter2x9.md")), syscall.EINVAL)
	tm.settle()
	if out := tm.git("log", "--all", "--format=%B", "--name-only"); strings.Contains(out, tok) || strings.Contains(out, "Hunter2x9") {
		t.Errorf("git history holds the name:\n%s", out)
	}
	if strings.Contains(logs.String(), tok) || strings.Contains(logs.String(), "Hunter2x9") {
		t.Errorf("the log holds the name:\n%s", logs.String())
	}
	tm.clean()
}
