package mcpserver

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mindmount/mindmount/fs/mount"
)

// TestConcurrentWithMount changes one repository at once through an MCP
// client and through a real FUSE mount: no update is lost, every MCP tool
// call is exactly one commit authored by the client, and the mount's
// writes are committed by their own author, never folded into an MCP
// commit.
func TestConcurrentWithMount(t *testing.T) {
	if _, err := os.Stat("/dev/fuse"); err != nil {
		t.Skip("no /dev/fuse: the concurrency test needs a FUSE mount")
	}
	if os.Geteuid() != 0 {
		t.Skip("the concurrency test mounts FUSE and needs root")
	}
	// A debounce long enough that the mount's writes are still pending
	// while MCP calls commit: they must stay out of those commits.
	rt := startRuntimeDebounce(t, newRepo(t), 300*time.Millisecond)
	mnt := t.TempDir()
	srv, err := mount.Mount(mnt, rt.Tracker, rt.Listeners, mount.Options{Logger: testLogger()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := mount.Unmount(srv, mnt); err != nil {
			t.Errorf("unmount: %v", err)
		}
		srv.Wait()
	})
	c := connect(t, rt, nil)
	seed := c.head()

	const n = 12
	var wg sync.WaitGroup
	errs := make(chan error, 2*n)
	wg.Add(2)
	go func() { // the MCP client: creates, then edits its first memory
		defer wg.Done()
		for i := range n {
			text, isErr := c.call("create", map[string]any{"path": fmt.Sprintf("user_memory/mcp-%d.md", i), "file_text": memoryFile(fmt.Sprintf("MCP %d", i), fmt.Sprintf("Fact %d from the MCP client", i), "From MCP.")})
			if isErr {
				errs <- fmt.Errorf("create %d: %s", i, text)
			}
		}
	}()
	go func() { // an agent's shell through the mount
		defer wg.Done()
		for i := range n {
			p := filepath.Join(mnt, "user_memory", fmt.Sprintf("mount-%d.md", i))
			if err := os.WriteFile(p, []byte(memoryFile(fmt.Sprintf("Mount %d", i), fmt.Sprintf("Fact %d from the mount", i), "From the mount.")), 0o644); err != nil {
				errs <- err
			}
		}
	}()
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := rt.Tracker.Settle(ctx); err != nil {
		t.Fatal(err)
	}

	for i := range n {
		for _, who := range []string{"mcp", "mount"} {
			rel := fmt.Sprintf("user_memory/%s-%d.md", who, i)
			if got := c.committed(rel); !strings.Contains(got, fmt.Sprintf("Fact %d from the", i)) {
				t.Errorf("%s lost: HEAD has %q", rel, got)
			}
		}
	}
	// Every commit since the seed: its author and the files it touched.
	log := c.git("log", "--format=@%an", "--name-only", seed+"..HEAD")
	mcpCommits := 0
	for _, commit := range strings.Split(strings.TrimPrefix(log, "@"), "\n@") {
		lines := strings.Fields(commit)
		if len(lines) == 0 {
			continue
		}
		// %an may hold a space: "mcp (test-client)".
		author, files := lines[0], lines[1:]
		if author == "mcp" {
			author, files = lines[0]+" "+lines[1], lines[2:]
		}
		for _, f := range files {
			isMCP := strings.HasPrefix(f, "user_memory/mcp-")
			switch {
			case isMCP && author != "mcp (test-client)":
				t.Errorf("%s committed by %q, want mcp (test-client)", f, author)
			case !isMCP && author != "agent":
				t.Errorf("%s committed by %q, want agent", f, author)
			}
		}
		if author == "mcp (test-client)" {
			mcpCommits++
			if len(files) != 1 {
				t.Errorf("an MCP commit touched %v, want one file per tool call", files)
			}
		}
	}
	if mcpCommits != n {
		t.Errorf("%d MCP commits, want %d (one per tool call)\n%s", mcpCommits, n, log)
	}
}
