package webui

import (
	"fmt"
	"net/http"
	"time"
)

// eventPoll is how often a live page's stream looks for a new commit.
// Reading HEAD is one small file read; a tracker subscription would outlive
// an unloaded user of serve, so the stream asks instead.
const eventPoll = time.Second

// events streams the repository's HEAD as server-sent events ("head"), at
// once and then whenever it moves; live.js refreshes the memory list and
// the timeline when it does, and reconnects with backoff when the stream
// breaks. The stream ends with the request (the browser leaves, or the
// server shuts down).
func (s *Server) events(v *view) {
	fl, ok := v.w.(http.Flusher)
	if !ok {
		http.Error(v.w, "streaming is not supported here", http.StatusNotImplemented)
		return
	}
	h := v.w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	v.w.WriteHeader(http.StatusOK)
	fmt.Fprintf(v.w, "retry: 2000\n\n")
	last := "-"
	tick := time.NewTicker(eventPoll)
	defer tick.Stop()
	for {
		head, _ := v.rt.Repo.Head()
		if head != last {
			last = head
			if _, err := fmt.Fprintf(v.w, "event: head\ndata: %s\n\n", head); err != nil {
				return
			}
			fl.Flush()
		}
		select {
		case <-v.r.Context().Done():
			return
		case <-tick.C:
		}
	}
}
