package main

import (
	"bytes"
	"net/http"
	"strings"
	gosync "sync"
	"sync/atomic"
)

// replica is one user's replication wait (--sync-replication) on this
// node: a write ended takes a ticket; a sync (fetch, memory merge, push)
// that began after the ticket was taken covers it. Writes ending while a
// sync runs share the next one, so a burst of writes costs two syncs.
type replica struct {
	tickets atomic.Uint64 // tickets given: writes ended
	mu      gosync.Mutex  // one sync at a time
	covered uint64        // every ticket up to this one is pushed
}

// wait returns once the write holding ticket is on the git host; push
// syncs the repository and reports whether it succeeded.
func (rp *replica) wait(ticket uint64, push func() bool) bool {
	rp.mu.Lock()
	defer rp.mu.Unlock()
	if rp.covered >= ticket {
		return true
	}
	start := rp.tickets.Load()
	if !push() {
		return false
	}
	rp.covered = max(rp.covered, start)
	return true
}

// replicated answers a write to id (every method but GET and HEAD) only
// once the user's repository is pushed: the worker's reply is held back
// (a streamed one is passed on as it comes, and ended only after the
// push), then a sync is asked of the worker. A write whose push fails is
// answered 503: committed on this node, not yet on the git host.
func (c *clusterRouter) replicated(h http.Handler, id string, rp *replica) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet || r.Method == http.MethodHead {
			h.ServeHTTP(w, r)
			return
		}
		// An MCP answer comes as an event stream too, but the client
		// takes the tool's result from it at once: it is held whole, or
		// a write whose push fails would look acknowledged.
		hw := &heldWriter{w: w, header: http.Header{}, holdStream: strings.HasPrefix(r.URL.Path, "/mcp")}
		h.ServeHTTP(hw, r)
		if hw.code >= 400 {
			hw.release() // refused: nothing was written
			return
		}
		ticket := rp.tickets.Add(1)
		ok := rp.wait(ticket, func() bool {
			return askWorker(h, "POST", "/v1/git/update", id) == http.StatusOK
		})
		if !ok && !hw.streamed {
			c.log.Warn("cluster: a write was committed but its push failed; answered 503", "user", id)
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusServiceUnavailable)
			w.Write([]byte(`{"error":"the write was committed on this node but could not be pushed to the git host (--sync-replication); retry"}` + "\n"))
			return
		}
		hw.release()
	})
}

// heldWriter holds a reply until release, except an event stream (but
// MCP's), which it passes on at once (its end is still held by the
// handler's return).
type heldWriter struct {
	w        http.ResponseWriter
	header   http.Header
	code     int
	body     bytes.Buffer
	streamed bool
	// holdStream holds an event stream like any reply (MCP).
	holdStream bool
}

func (hw *heldWriter) Header() http.Header {
	if hw.streamed {
		return hw.w.Header()
	}
	return hw.header
}

func (hw *heldWriter) WriteHeader(code int) {
	if hw.code != 0 {
		return
	}
	hw.code = code
	if !hw.holdStream && strings.HasPrefix(hw.header.Get("Content-Type"), "text/event-stream") {
		hw.streamed = true
		for k, v := range hw.header {
			hw.w.Header()[k] = v
		}
		hw.w.WriteHeader(code)
	}
}

func (hw *heldWriter) Write(p []byte) (int, error) {
	if hw.code == 0 {
		hw.WriteHeader(http.StatusOK)
	}
	if hw.streamed {
		return hw.w.Write(p)
	}
	return hw.body.Write(p)
}

// Flush passes a stream's bytes on; a held reply stays held.
func (hw *heldWriter) Flush() {
	if f, ok := hw.w.(http.Flusher); ok && hw.streamed {
		f.Flush()
	}
}

// release writes the held reply.
func (hw *heldWriter) release() {
	if hw.streamed {
		return
	}
	for k, v := range hw.header {
		hw.w.Header()[k] = v
	}
	if hw.code == 0 {
		hw.code = http.StatusOK
	}
	hw.w.WriteHeader(hw.code)
	hw.w.Write(hw.body.Bytes())
}
