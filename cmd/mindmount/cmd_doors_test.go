package main

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestDoorsBesideAMount: while "mindmount mount" serves a repository,
// "mindmount mcp" and "mindmount ui" started beside it are served by it
// through its control socket instead of refusing: a memory created over
// MCP and retired from the page each land as one commit, made by the
// mount's tracker, and the mount shows both.
func TestDoorsBesideAMount(t *testing.T) {
	requireFUSE(t)
	requireGitCLI(t)
	repo := filepath.Join(t.TempDir(), "memory")
	runCmd(t, "init", repo, "--user", "Ada")
	mnt := t.TempDir()
	daemon, daemonLogs := startMindmount(t, noModel, "mindmount: mounted "+repo+" at "+mnt,
		"mount", repo, mnt, "--debounce", "50ms", "--consolidate=false")
	defer stopMindmount(t, daemon, daemonLogs)
	rel := "user_memory/peanut-allergy.md"
	commitsOf := func() []string {
		return strings.Fields(gitOut(t, repo, "log", "--format=%h", "--", rel))
	}

	// MCP beside the mount.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.Command(mindmountBinary(t), "mcp", repo, "--consolidate=false")
	logs := new(logBuffer)
	cmd.Stderr = logs
	cmd.Env = append(os.Environ(), noModel...)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "beside", Version: "1"}, nil).
		Connect(ctx, &mcp.CommandTransport{Command: cmd, TerminateDuration: 30 * time.Second}, nil)
	if err != nil {
		t.Fatalf("connect: %v\n%s", err, logs.String())
	}
	memory := "---\ndescription: Allergic to peanuts\nstatus: active\n---\n# Peanut Allergy\n\n## Fact\nThe user is allergic to peanuts.\n\n## Access log\n"
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "create", Arguments: map[string]any{"path": rel, "file_text": memory}})
	if err != nil || res.IsError {
		t.Fatalf("create beside the mount: %v %s\n%s", err, toolText(res), logs.String())
	}
	if err := cs.Close(); err != nil {
		t.Errorf("close: %v", err)
	}
	if cmd.ProcessState == nil || !cmd.ProcessState.Success() {
		t.Fatalf("mindmount mcp beside the mount: %v\n%s", cmd.ProcessState, logs.String())
	}
	if got := commitsOf(); len(got) != 1 {
		t.Fatalf("%d commits of %s after the MCP create, want 1", len(got), rel)
	}
	if an := gitOut(t, repo, "log", "-1", "--format=%an", "--", rel); an != "mcp (beside)" {
		t.Errorf("the create's author is %q", an)
	}
	if b, err := os.ReadFile(filepath.Join(mnt, rel)); err != nil || !strings.Contains(string(b), "peanuts") {
		t.Errorf("the mount does not show the MCP's memory: %v", err)
	}

	// The web page beside the mount.
	ui, uiLogs, login := startFirstLine(t, noModel, "ui", repo, "--http", "127.0.0.1:0", "--consolidate=false")
	if !regexp.MustCompile(`^http://127\.0\.0\.1:[1-9][0-9]*/\?token=`).MatchString(login) {
		t.Fatalf("first line %q, want the login URL\n%s", login, uiLogs)
	}
	c := uiClient()
	if code, body := uiGet(t, c, login); code != http.StatusOK || !strings.Contains(body, "<h1>Memories</h1>") {
		t.Fatalf("login: %d\n%s\n%s", code, body, uiLogs)
	}
	base, _, _ := strings.Cut(login, "/?token=")
	_, body := uiGet(t, c, base+"/m/"+rel)
	m := regexp.MustCompile(`name="csrf" value="([^"]+)"`).FindStringSubmatch(body)
	if m == nil {
		t.Fatalf("no form on the memory's page:\n%s", body)
	}
	req, _ := http.NewRequest(http.MethodPost, base+"/retire", strings.NewReader(url.Values{"csrf": {m[1]}, "path": {rel}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", base)
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode >= 400 {
		t.Fatalf("retire: %d\n%s", resp.StatusCode, uiLogs)
	}
	if got := commitsOf(); len(got) != 2 {
		t.Fatalf("%d commits of %s after the page's retire, want 2", len(got), rel)
	}
	if an := gitOut(t, repo, "log", "-1", "--format=%an", "--", rel); an != "ui" {
		t.Errorf("the retire's author is %q", an)
	}
	if b, _ := os.ReadFile(filepath.Join(mnt, rel)); !strings.Contains(string(b), "status: retracted") {
		t.Errorf("the mount does not show the retire:\n%s", b)
	}
	ui.Process.Signal(syscall.SIGTERM)
	if err := ui.Wait(); err != nil {
		t.Fatalf("ui after SIGTERM: %v\n%s", err, uiLogs)
	}
	if strings.Contains(logs.String()+uiLogs.String(), "already serving this repository") {
		t.Errorf("a door was refused:\n%s\n%s", logs, uiLogs)
	}
}

// TestHooksInstallWarnsWhatWouldNotRun: an install made by a temporary
// build (go run, go test: this test's own binary) warns that the harness
// will not find it; one made by a built binary does not.
func TestHooksInstallWarnsWhatWouldNotRun(t *testing.T) {
	repo := filepath.Join(t.TempDir(), "memory")
	runCmd(t, "init", repo)
	t.Setenv("HOME", t.TempDir())
	var out, errOut strings.Builder
	if code := run([]string{"hooks", "install", "--harness", "claude-code", repo}, &out, &errOut); code != 0 {
		t.Fatalf("install: %d %s", code, errOut.String())
	}
	if !strings.Contains(errOut.String(), "warning: claude-code will not run what was installed") || !strings.Contains(errOut.String(), "temporary build") {
		t.Errorf("no warning for a temporary build:\n%s", errOut.String())
	}
	cmd := exec.Command(mindmountBinary(t), "hooks", "install", "--harness", "claude-code", repo)
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir())
	b, err := cmd.CombinedOutput()
	if err != nil || strings.Contains(string(b), "warning") {
		t.Errorf("an installed binary: %v\n%s", err, b)
	}
}

// startFirstLine runs the built binary with args and returns it with the
// first line it prints (a readiness line, the page's login URL). A
// process still running at the
// end of the test is killed.
func startFirstLine(t *testing.T, env []string, args ...string) (*exec.Cmd, *logBuffer, string) {
	t.Helper()
	cmd := exec.Command(mindmountBinary(t), args...)
	logs := new(logBuffer)
	cmd.Stderr = logs
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})
	lines := make(chan string, 1)
	go func() {
		l, _ := bufio.NewReader(out).ReadString('\n')
		lines <- strings.TrimSuffix(l, "\n")
		io.Copy(io.Discard, out)
	}()
	select {
	case line := <-lines:
		return cmd, logs, line
	case <-time.After(time.Minute):
		t.Fatalf("mindmount %s printed no first line\n%s", strings.Join(args, " "), logs)
	}
	return nil, nil, ""
}
