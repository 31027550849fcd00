package main

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mindmount/mindmount/serve/control"
	"github.com/mindmount/mindmount/serve/host"
	"github.com/mindmount/mindmount/serve/remote"
)

// syncToken is the token the sync tests hunt for.
const syncToken = "ghp_CLIsyncSECRET0123456789abcdefXYZ"

// TestSyncNeverShowsToken: a git host whose refusal quotes the token it
// was sent (go-git puts that text into its error) fails "mindmount sync",
// both when it syncs itself and when it asks a running daemon; the
// output says what the host said, and the token is in none of: the
// output, the daemon's log, the sync state in .git, "mindmount status" or
// "mindmount remote show".
func TestSyncNeverShowsToken(t *testing.T) {
	requireGitCLI(t)
	host := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, pw, ok := r.BasicAuth()
		if !ok {
			w.Header().Set("WWW-Authenticate", `Basic realm="git"`)
			http.Error(w, "authentication required", http.StatusUnauthorized)
			return
		}
		http.Error(w, "token "+pw+" may not access memory.git", http.StatusForbidden)
	}))
	defer host.Close()
	t.Setenv("MINDMOUNT_GIT_TOKEN", syncToken)
	t.Setenv("MINDMOUNT_CREDENTIALS", filepath.Join(t.TempDir(), "credentials"))
	dir := filepath.Join(t.TempDir(), "memory")
	runCmd(t, "init", dir)
	runCmd(t, "remote", "set", dir, host.URL+"/memory.git")

	texts := map[string]string{}
	sync := func(how string) {
		t.Helper()
		var out, errb bytes.Buffer
		if code := run([]string{"sync", dir}, &out, &errb); code == 0 {
			t.Fatalf("%s: sync against a refusing host succeeded:\n%s", how, out.String())
		}
		all := out.String() + errb.String()
		if !strings.Contains(all, "may not access memory.git") {
			t.Errorf("%s: the output does not say what the host said:\n%s", how, all)
		}
		texts["sync output "+how] = all
	}
	sync("without a daemon")

	ready := "mindmount: watching " + dir
	cmd, logs := startMindmount(t, noModel, ready, "watch", dir, "--debounce", "50ms", "--rescan", "0", "--consolidate=false")
	sock := filepath.Join(dir, ".git", filepath.FromSlash(control.SocketFile))
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if _, err := os.Stat(sock); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no sync socket\n%s", logs.String())
		}
	}
	sync("through the daemon")
	// Watch mode rewrites its status file when the tracker commits: make
	// it commit, so the file carries the sync state.
	mem := "---\ndescription: Likes tea\n---\n# Likes Tea\n\n## Fact\nTea.\n"
	if err := os.WriteFile(filepath.Join(dir, "user_memory", "likes-tea.md"), []byte(mem), 0o644); err != nil {
		t.Fatal(err)
	}
	statusFile := filepath.Join(dir, ".mindmount", "status")
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if b, _ := os.ReadFile(statusFile); strings.Contains(string(b), "may not access memory.git") {
			texts[".mindmount/status"] = string(b)
			break
		}
		if time.Now().After(deadline) {
			b, _ := os.ReadFile(statusFile)
			t.Fatalf("the status file does not report the failed sync:\n%s", b)
		}
	}
	stopMindmount(t, cmd, logs)
	if !strings.Contains(logs.String(), "sync failed") {
		t.Errorf("the daemon did not log the failure:\n%s", logs.String())
	}

	state, err := os.ReadFile(filepath.Join(dir, ".git", "mindmount", "sync.json"))
	if err != nil || !strings.Contains(string(state), "may not access memory.git") {
		t.Fatalf("sync state: %v\n%s", err, state)
	}
	texts["the daemon's log"] = logs.String()
	texts[".git/mindmount/sync.json"] = string(state)
	texts["mindmount status"] = runCmd(t, "status", dir)
	texts["mindmount remote show"] = runCmd(t, "remote", "show", dir)
	for what, s := range texts {
		if strings.Contains(s, syncToken) {
			t.Errorf("%s holds the token:\n%s", what, s)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(dir, ".git", "config")); bytes.Contains(b, []byte(syncToken)) {
		t.Error(".git/config holds the token")
	}
}

// TestSyncAsRootRunsNoUserProgram: root's "mindmount sync" on alice's
// repository, with no daemon and her control socket gone, runs none of
// the programs her git configuration names (core.fsmonitor) and leaves
// no file of root's in her repository (a .git/index or sync state of
// root's would stop her worker from committing).
func TestSyncAsRootRunsNoUserProgram(t *testing.T) {
	root := serveRoot(t)
	p := plantGitPrograms(t, host.UserDir(root, "alice"), aliceUID)
	if out, err := as(aliceUID, "env", "HOME=/nonexistent", "git", "-C", p.dir, "remote", "add", "origin", "/nonexistent/remote.git"); err != nil {
		t.Fatalf("remote: %v\n%s", err, out)
	}
	os.Remove(p.marker)
	out, _ := runBinary(t, []string{"HOME=/nonexistent"}, "sync", p.dir)
	p.ranAs(t, "mindmount sync")
	if left := rootOwned(t, p.dir); len(left) > 0 {
		t.Errorf("sync left files of root's in alice's repository: %v\n%s", left, out)
	}
}

// TestSyncRefusesBesideServe: while a mindmount serve holds ROOT's lock, a
// user's repository whose control socket is missing is served all the
// same: sync refuses rather than write beside the daemon.
func TestSyncRefusesBesideServe(t *testing.T) {
	root := serveRoot(t)
	dir := host.UserDir(root, "alice")
	if out, err := as(aliceUID, "env", "HOME=/nonexistent", "git", "-C", dir, "remote", "add", "origin", "/nonexistent/remote.git"); err != nil {
		t.Fatalf("remote: %v\n%s", err, out)
	}
	lock, err := os.OpenFile(filepath.Join(root, ".serve.lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	lock.WriteString("4242\n\n")
	out, code := runBinary(t, []string{"HOME=/nonexistent"}, "sync", dir)
	if code == 0 || !strings.Contains(out, "mindmount serve (pid 4242) serves") {
		t.Fatalf("sync beside serve: exit %d\n%s", code, out)
	}
	if left := rootOwned(t, dir); len(left) > 0 {
		t.Errorf("sync left files of root's in alice's repository: %v", left)
	}
}

// TestSyncInPlaceUsesTheServedUsersToken: root's "mindmount sync" on
// alice's served repository, run in place (no daemon), sends the token
// of ROOT/credentials/alice/git, as her worker does, never the one in
// root's environment.
func TestSyncInPlaceUsesTheServedUsersToken(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: the repository belongs to another uid")
	}
	const theirs, envToken = "ghp_ALICEownTOKEN0123456789abcdefXYZ", "ghp_ROOTenvTOKEN0123456789abcdefXYZ"
	var mu sync.Mutex
	var seen []string
	gitHost := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, pw, ok := r.BasicAuth()
		if !ok {
			w.Header().Set("WWW-Authenticate", `Basic realm="git"`)
			http.Error(w, "authentication required", http.StatusUnauthorized)
			return
		}
		mu.Lock()
		seen = append(seen, pw)
		mu.Unlock()
		http.Error(w, "no such repository", http.StatusNotFound)
	}))
	defer gitHost.Close()
	root := serveRoot(t)
	dir := host.UserDir(root, "alice")
	if out, err := as(aliceUID, "env", "HOME=/nonexistent", "git", "-C", dir, "remote", "add", "origin", gitHost.URL+"/alice.git"); err != nil {
		t.Fatalf("remote: %v\n%s", err, out)
	}
	// ROOT/credentials/alice is hers (0700), as serve makes it.
	creds := remote.CredentialsDir(root, "alice")
	if err := os.MkdirAll(filepath.Dir(creds), 0o711); err != nil {
		t.Fatal(err)
	}
	reachable(filepath.Dir(creds))
	if err := os.Mkdir(creds, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(creds, "git"), []byte(gitHost.URL+" "+theirs+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{creds, filepath.Join(creds, "git")} {
		if err := os.Chown(p, aliceUID, aliceUID); err != nil {
			t.Fatal(err)
		}
	}
	out, _ := runBinary(t, []string{"HOME=/nonexistent", remote.TokenEnv + "=" + envToken}, "sync", dir)
	mu.Lock()
	defer mu.Unlock()
	if len(seen) == 0 {
		t.Fatalf("the git host was sent no token:\n%s", out)
	}
	for _, pw := range seen {
		if pw != theirs {
			t.Fatalf("sync sent a token that is not alice's own (root's environment?):\n%s", out)
		}
	}
	if strings.Contains(out, theirs) || strings.Contains(out, envToken) {
		t.Errorf("the output holds a token:\n%s", out)
	}
}
