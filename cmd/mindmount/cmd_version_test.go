package main

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestOneVersionEverywhere (issue 27): the built binary names one version
// in --version, -v, its MCP serverInfo and serve --http's /health.
func TestOneVersionEverywhere(t *testing.T) {
	bin := mindmountBinary(t)
	versionOf := func(flag string) string {
		out, err := exec.Command(bin, flag).Output()
		f := strings.Fields(string(out))
		if err != nil || len(f) < 2 || f[0] != "mindmount" {
			t.Fatalf("mindmount %s: %v %q", flag, err, out)
		}
		return f[1]
	}
	want := versionOf("--version")
	if v := versionOf("-v"); v != want {
		t.Errorf("-v says %q, --version %q", v, want)
	}

	cmd := exec.Command(bin, "mcp", mcpRepo(t), "--consolidate=false")
	logs := new(logBuffer)
	cmd.Stderr = logs
	cmd.Env = append(os.Environ(), noModel...)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "version-test", Version: "1"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd, TerminateDuration: 30 * time.Second}, nil)
	if err != nil {
		t.Fatalf("connect: %v\n%s", err, logs)
	}
	if v := cs.InitializeResult().ServerInfo.Version; v != want {
		t.Errorf("MCP serverInfo says %q, --version %q", v, want)
	}
	cs.Close()

	env := []string{"MINDMOUNT_LLM=ollama", "OLLAMA_HOST=127.0.0.1:9", "MINDMOUNT_MODEL=fake", "MINDMOUNT_API_KEY="}
	srv, slogs, base := startServeHTTP(t, t.TempDir(), env)
	resp, err := http.Get(base + "/health")
	if err != nil {
		t.Fatal(err)
	}
	var h struct {
		Version string `json:"version"`
	}
	err = json.NewDecoder(resp.Body).Decode(&h)
	resp.Body.Close()
	if err != nil || h.Version != want {
		t.Errorf("/health says %q (%v), --version %q", h.Version, err, want)
	}
	stopMindmount(t, srv, slogs)
}
