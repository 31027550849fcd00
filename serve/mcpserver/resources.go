package mcpserver

import (
	"context"
	"hash/fnv"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mindmount/mindmount/memgraph"
)

// resourceURIs maps the generated views served as resources to their
// repository paths. A client that subscribes hears when one changes.
var resourceURIs = map[string]string{
	"mindmount://memory/user_memory.md":      memgraph.UserIndexFile,
	"mindmount://memory/character_memory.md": memgraph.CharIndexFile,
	"mindmount://memory/CONTEXT.md":          memgraph.ContextFile,
}

var resourceInfo = map[string]string{
	memgraph.UserIndexFile: "Index of the active memories about the user, most used first: slug, description, use count.",
	memgraph.CharIndexFile: "Index of the active memories about how to work with the user, most used first.",
	memgraph.ContextFile:   "The compiled context: persona, both indexes, the user profile, system blocks and a tree of other memory.",
}

// resources serves the generated views and tells subscribers when they
// change. Changes come from the tracker's goroutine, which must not wait
// on a slow client: they are coalesced and sent from one short-lived
// goroutine at a time, each send bounded by a timeout.
type resources struct {
	s *server

	mu      sync.Mutex
	dirty   bool              // a change arrived since the sender last looked
	sending bool              // a sender goroutine runs
	sums    map[string]uint64 // uri -> fingerprint last announced
	subs    int               // live subscriptions, so changes cost nothing without them
}

func newResources(s *server) *resources {
	r := &resources{s: s, sums: map[string]uint64{}}
	for uri, rel := range resourceURIs {
		r.sums[uri] = sum(r.read(rel))
	}
	return r
}

func (r *resources) register() {
	for uri, rel := range resourceURIs {
		r.s.mcp.AddResource(&mcp.Resource{URI: uri, Name: rel, Title: rel, MIMEType: "text/markdown", Description: resourceInfo[rel]}, r.handle)
	}
}

func (r *resources) read(rel string) []byte {
	data, _ := r.s.synthesized(rel)
	return data
}

func (r *resources) handle(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	rel, ok := resourceURIs[req.Params.URI]
	if !ok {
		return nil, mcp.ResourceNotFoundError(req.Params.URI)
	}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: "text/markdown", Text: string(r.read(rel))}}}, nil
}

func (r *resources) subscribe(ctx context.Context, req *mcp.SubscribeRequest) error {
	if _, ok := resourceURIs[req.Params.URI]; !ok {
		return mcp.ResourceNotFoundError(req.Params.URI)
	}
	r.mu.Lock()
	r.subs++
	r.mu.Unlock()
	return nil
}

func (r *resources) unsubscribe(ctx context.Context, req *mcp.UnsubscribeRequest) error {
	r.mu.Lock()
	if r.subs > 0 {
		r.subs--
	}
	r.mu.Unlock()
	return nil
}

// changed is the tracker's subscriber: after every commit, HEAD reload or
// newly invalid file the views may differ.
func (r *resources) changed([]string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.subs == 0 {
		// Nobody listens; the fingerprints are refreshed on the first
		// change after a subscription, at worst one extra notification.
		return
	}
	r.dirty = true
	if r.sending {
		return
	}
	r.sending = true
	go r.send()
}

// send announces every view whose content changed, until no change is
// left; then the goroutine ends.
func (r *resources) send() {
	for {
		r.mu.Lock()
		if !r.dirty {
			r.sending = false
			r.mu.Unlock()
			return
		}
		r.dirty = false
		r.mu.Unlock()
		for uri, rel := range resourceURIs {
			h := sum(r.read(rel))
			r.mu.Lock()
			same := r.sums[uri] == h
			r.sums[uri] = h
			r.mu.Unlock()
			if same {
				continue
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			if err := r.s.mcp.ResourceUpdated(ctx, &mcp.ResourceUpdatedNotificationParams{URI: uri}); err != nil {
				r.s.log.Debug("resource change not delivered", "uri", uri, "err", err)
			}
			cancel()
		}
	}
}

func sum(b []byte) uint64 {
	h := fnv.New64a()
	h.Write(b)
	return h.Sum64()
}
