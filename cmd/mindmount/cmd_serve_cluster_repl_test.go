package main

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestClusterSyncReplicationHoldsMCP: under --sync-replication a write
// whose push fails is answered 503. An MCP answer (an event stream the
// client reads its tool result from) is held whole, so its client sees
// the 503, never the result; a chat's stream is passed on as it comes.
func TestClusterSyncReplicationHoldsMCP(t *testing.T) {
	worker := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/git/update" {
			w.WriteHeader(http.StatusBadGateway) // the git host refuses
			return
		}
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		io.WriteString(w, "event: message\ndata: {\"result\":\"created\"}\n\n")
	})
	c := &clusterRouter{log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	cases := []struct {
		path     string
		code     int
		seesBody bool
	}{
		{"/mcp", http.StatusServiceUnavailable, false},
		{"/v1/chat", http.StatusOK, true},
	}
	for _, tc := range cases {
		rec := httptest.NewRecorder()
		c.replicated(worker, "alice", &replica{}).ServeHTTP(rec, httptest.NewRequest("POST", tc.path, strings.NewReader("{}")))
		if rec.Code != tc.code || strings.Contains(rec.Body.String(), "created") != tc.seesBody {
			t.Errorf("%s with a failed push: %d %q, want %d (result seen: %v)", tc.path, rec.Code, rec.Body, tc.code, tc.seesBody)
		}
	}
}
