package httpapi

import (
	"context"
	"io"
	"testing"
	"time"

	"github.com/mindmount/mindmount/consolidate/llmtest"
)

// TestChatOnePath: a /v1/chat turn reaches the repository through one
// path: the tracker hears of the transcript, updates no memory of the
// graph, reloads no HEAD, and tells the consolidator once.
func TestChatOnePath(t *testing.T) {
	e := newEnv(t, "ollama", nil)
	ctx := context.Background()
	rt, release, err := e.h.Acquire(ctx, "alice")
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	settle := func() {
		t.Helper()
		sctx, cancel := context.WithTimeout(ctx, 20*time.Second)
		defer cancel()
		if err := rt.Tracker.Settle(sctx); err != nil {
			t.Fatal(err)
		}
	}
	settle()
	before, heard := rt.Tracker.Counts(), rt.Consolidator.Heard()
	e.model.Queue(llmtest.KindOther, llmtest.Reply{Content: "Hello!"})
	resp := e.do("POST", "/v1/chat", adminKey, `{"userId":"alice","message":"Hi, I keep bees.","sessionId":"one"}`)
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("chat: %d", resp.StatusCode)
	}
	settle()
	// fsnotify's report of the transcript arrives a moment later.
	time.Sleep(200 * time.Millisecond)
	settle()
	after := rt.Tracker.Counts()
	if d := rt.Consolidator.Heard() - heard; d != 1 {
		t.Errorf("the consolidator heard of one chat %d times, want 1", d)
	}
	if d := after.GraphWrites - before.GraphWrites; d != 0 {
		t.Errorf("graph updated %d times for a transcript, want 0", d)
	}
	if d := after.HeadReloads - before.HeadReloads; d != 0 {
		t.Errorf("HEAD reloaded %d times, want 0", d)
	}
}
