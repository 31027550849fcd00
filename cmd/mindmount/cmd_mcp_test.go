package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// mcpRepo makes a mindmount repository for the MCP tests with the template.
func mcpRepo(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "memory")
	var out, errOut bytes.Buffer
	if code := run([]string{"init", dir, "--user", "Ada"}, &out, &errOut); code != 0 {
		t.Fatalf("mindmount init: %d\n%s", code, errOut.String())
	}
	return dir
}

func toolText(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// TestMCPStdio runs the built binary as an MCP server over stdio, as a
// desktop client would, and checks that its writes are commits.
func TestMCPStdio(t *testing.T) {
	dir := mcpRepo(t)
	cmd := exec.Command(mindmountBinary(t), "mcp", dir, "--consolidate=false", "--debounce", "50ms")
	logs := new(logBuffer)
	cmd.Stderr = logs
	cmd.Env = append(os.Environ(), noModel...)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cl := mcp.NewClient(&mcp.Implementation{Name: "stdio-test", Version: "1"}, nil)
	cs, err := cl.Connect(ctx, &mcp.CommandTransport{Command: cmd, TerminateDuration: 30 * time.Second}, nil)
	if err != nil {
		t.Fatalf("connect: %v\n%s", err, logs.String())
	}
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(tools.Tools) != 10 {
		t.Errorf("%d tools, want 10", len(tools.Tools))
	}
	call := func(name string, args map[string]any) (string, bool) {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			t.Fatalf("%s: %v\n%s", name, err, logs.String())
		}
		return toolText(res), res.IsError
	}
	memory := "---\ndescription: Allergic to peanuts\nstatus: active\n---\n# Peanut Allergy\n\n## Fact\nThe user is allergic to peanuts.\n\n## Access log\n"
	if text, isErr := call("create", map[string]any{"path": "/memories/user_memory/peanut-allergy.md", "file_text": memory}); isErr {
		t.Fatalf("create: %s", text)
	}
	if text, isErr := call("create", map[string]any{"path": "user_memory/bad.md", "file_text": "no frontmatter\n"}); !isErr || !strings.Contains(text, "user_memory/bad.md") {
		t.Errorf("invalid create: %v %s", isErr, text)
	}
	if text, _ := call("recall", map[string]any{"query": "does the user have allergies?"}); !strings.Contains(text, "peanut-allergy.md") {
		t.Errorf("recall: %s", text)
	}
	if text, isErr := call("use", map[string]any{"path": "user_memory/peanut-allergy.md"}); isErr {
		t.Errorf("use: %s", text)
	}
	if err := cs.Close(); err != nil {
		t.Errorf("close: %v", err)
	}
	if cmd.ProcessState == nil || !cmd.ProcessState.Success() {
		t.Errorf("mindmount mcp did not exit cleanly: %v\n%s", cmd.ProcessState, logs.String())
	}
	authors := gitOut(t, dir, "log", "--format=%an|%s", "-2")
	want := "mcp (stdio-test)|mcp (stdio-test): use user_memory/peanut-allergy.md\nmcp (stdio-test)|mcp (stdio-test): add user_memory/peanut-allergy.md"
	if authors != want {
		t.Errorf("last commits:\n%s\nwant:\n%s", authors, want)
	}
	if _, err := os.Stat(filepath.Join(dir, "user_memory", "bad.md")); err == nil {
		t.Error("the refused file was written")
	}
}

func TestMCPRefusesNonRepo(t *testing.T) {
	var out, errOut bytes.Buffer
	dir := t.TempDir()
	if code := run([]string{"mcp", dir}, &out, &errOut); code != 1 || !strings.Contains(errOut.String(), "mindmount init") {
		t.Errorf("exit %d, stderr %q", code, errOut.String())
	}
	if out.Len() != 0 {
		t.Errorf("stdout (the protocol channel) got %q", out.String())
	}
}

// TestMCPTypeScriptClient drives mindmount mcp with the official TypeScript
// SDK client (scripts/mcp-client), a client nobody here wrote.
func TestMCPTypeScriptClient(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed: the TypeScript MCP client test needs node and npm (CI installs them in .ci/run)")
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		t.Skip("npm is not installed: the TypeScript MCP client test needs node and npm (CI installs them in .ci/run)")
	}
	script, err := filepath.Abs(filepath.Join("..", "..", "scripts", "mcp-client"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(script, "node_modules", "@modelcontextprotocol", "sdk", "package.json")); err != nil {
		// Install exactly what the lockfile says, in place (git-ignored).
		c := exec.Command(npm, "ci", "--no-audit", "--no-fund")
		c.Dir = script
		if out, err := c.CombinedOutput(); err != nil {
			t.Fatalf("npm ci in %s: %v\n%s", script, err, out)
		}
	}
	dir := mcpRepo(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	c := exec.CommandContext(ctx, node, filepath.Join(script, "client.mjs"), mindmountBinary(t), dir)
	c.Env = append(os.Environ(), noModel...)
	var stderrBuf bytes.Buffer
	c.Stderr = &stderrBuf
	out, err := c.Output()
	if err != nil {
		t.Fatalf("node client.mjs: %v\n%s", err, stderrBuf.String())
	}
	type result struct {
		IsError bool   `json:"isError"`
		Text    string `json:"text"`
	}
	var got struct {
		Server       struct{ Name string } `json:"server"`
		Instructions string                `json:"instructions"`
		Tools        []string              `json:"tools"`
		Create       result                `json:"create"`
		Invalid      result                `json:"invalid"`
		View         result                `json:"view"`
		Recall       result                `json:"recall"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("client output %q: %v", out, err)
	}
	if want := []string{"context", "create", "delete", "insert", "recall", "rename", "skills", "str_replace", "use", "view"}; !slices.Equal(got.Tools, want) {
		t.Errorf("tools %v, want %v", got.Tools, want)
	}
	if got.Server.Name != "mindmount" || !strings.Contains(got.Instructions, "One fact per file") {
		t.Errorf("server %q, instructions %q", got.Server.Name, got.Instructions)
	}
	if got.Create.IsError || !strings.Contains(got.Create.Text, "created /memories/user_memory/likes-jazz.md") {
		t.Errorf("create: %+v", got.Create)
	}
	if !got.Invalid.IsError || !strings.Contains(got.Invalid.Text, "refused, nothing was written") {
		t.Errorf("invalid create: %+v", got.Invalid)
	}
	if got.View.IsError || !strings.Contains(got.View.Text, "     5\t# Likes Jazz") {
		t.Errorf("view: %+v", got.View)
	}
	if got.Recall.IsError || !strings.HasPrefix(got.Recall.Text, "1. /memories/user_memory/likes-jazz.md") {
		t.Errorf("recall: %+v", got.Recall)
	}
	if a := gitOut(t, dir, "log", "-1", "--format=%an|%s"); a != "mcp (ts-sdk-client)|mcp (ts-sdk-client): add user_memory/likes-jazz.md" {
		t.Errorf("last commit %q", a)
	}
}

// startMCPStdio runs mindmount mcp on a new repository: its stdin, and a
// scanner of its stdout's lines. The server ends with the test.
func startMCPStdio(t *testing.T) (io.WriteCloser, *bufio.Scanner) {
	t.Helper()
	repo := filepath.Join(t.TempDir(), "m")
	runCmd(t, "init", repo)
	cmd := exec.Command(mindmountBinary(t), "mcp", repo)
	cmd.Env = append(os.Environ(), "MINDMOUNT_LLM=")
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { in.Close(); cmd.Wait() })
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	return in, sc
}

// TestMCPStdioParseError: a line that is not JSON gets JSON-RPC's parse
// error (-32700), one that is not a valid JSON-RPC 2.0 request gets
// -32600, and the server keeps serving the same session.
func TestMCPStdioParseError(t *testing.T) {
	in, sc := startMCPStdio(t)
	bad := []string{
		`{"jsonrpc":"2.0","id":true,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":{},"method":"tools/list"}`,
		`{"jsonrpc":"1.0","id":2,"method":"tools/list"}`,
		`{"id":3,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":1.5,"method":"tools/list"}`,
	}
	io.WriteString(in, strings.Join(bad, "\n")+"\n")
	for i := range bad {
		if !sc.Scan() {
			t.Fatalf("the server ended after %q", bad[i])
		}
		var v map[string]any
		if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
			t.Fatalf("not JSON on stdout: %q", sc.Text())
		}
		if e, _ := v["error"].(map[string]any); e == nil || e["code"] != -32600.0 {
			t.Fatalf("answer to %s: %v", bad[i], v)
		}
	}
	io.WriteString(in, "this is not json\n"+`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`+"\n")
	var replies []map[string]any
	for len(replies) < 2 && sc.Scan() {
		var v map[string]any
		if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
			t.Fatalf("not JSON on stdout: %q", sc.Text())
		}
		replies = append(replies, v)
	}
	if len(replies) != 2 {
		t.Fatalf("replies %v", replies)
	}
	if e, _ := replies[0]["error"].(map[string]any); e == nil || e["code"] != -32700.0 || replies[0]["id"] != nil {
		t.Fatalf("first reply %v, want a parse error", replies[0])
	}
	if replies[1]["id"] != 1.0 || replies[1]["result"] == nil {
		t.Fatalf("initialize after the bad line: %v", replies[1])
	}
}

// TestMCPStdioInOrder (issue 27): calls a client sends without waiting are
// answered in the order of their effects: each view after a create sees it.
func TestMCPStdioInOrder(t *testing.T) {
	in, sc := startMCPStdio(t)
	const pairs = 20
	var b strings.Builder
	b.WriteString(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}` + "\n")
	b.WriteString(`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n")
	for i := 1; i <= pairs; i++ {
		text := fmt.Sprintf("---\\ndescription: Fact %d\\n---\\n# Fact %d\\n\\n## Fact\\nMarker%d.\\n\\n## Access log\\n", i, i, i)
		fmt.Fprintf(&b, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"create","arguments":{"path":"user_memory/fact-%d.md","file_text":"%s"}}}`+"\n", 2*i-1, i, text)
		fmt.Fprintf(&b, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"view","arguments":{"path":"user_memory/fact-%d.md"}}}`+"\n", 2*i, i)
	}
	io.WriteString(in, b.String()) // all at once, answers not awaited
	seen := 0
	for seen < 2*pairs+1 && sc.Scan() {
		var v struct {
			ID     int             `json:"id"`
			Result json.RawMessage `json:"result"`
			Error  json.RawMessage `json:"error"`
		}
		if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
			t.Fatalf("not JSON on stdout: %q", sc.Text())
		}
		seen++
		if v.ID == 0 || v.ID%2 == 1 {
			continue
		}
		if want := fmt.Sprintf("Marker%d.", v.ID/2); !strings.Contains(string(v.Result), want) {
			t.Errorf("view %d answered %s%s, want the file just created (%s)", v.ID/2, v.Result, v.Error, want)
		}
	}
	if seen != 2*pairs+1 {
		t.Fatalf("%d answers, want %d", seen, 2*pairs+1)
	}
}
