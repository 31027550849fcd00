package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// stats is what the run measured.
type stats struct {
	served   atomic.Int64 // answers 2xx, to the clients and the samplers
	counter  atomic.Int64 // the last write's number
	mu       sync.Mutex
	acked    map[string][]int // user -> its acknowledged writes
	ackHTTP  int
	ackMCP   int
	unacked  int
	byeEmpty int             // byes answered with nothing consolidated (the chat's node lost the user)
	direct   []time.Duration // GET straight to the owner
	hop      []time.Duration // the same through a node that forwards once
	takeover []time.Duration // pause -> the user served by another node
	lag      []float64       // nodes' worst replication lag, sampled
	trials   int
	skipped  int
	joinedD  int // users d held at the end
	lost     int
	forced   int
	fsckBad  int
}

func (st *stats) ack(user string, n int, viaMCP bool) {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.acked[user] = append(st.acked[user], n)
	if viaMCP {
		st.ackMCP++
	} else {
		st.ackHTTP++
	}
}

// counting is a client transport: the admin key, the user's header,
// and every 2xx answer counted.
type counting struct {
	user string
	st   *stats
}

func (c counting) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	req.Header.Set("Authorization", "Bearer "+apiKey)
	req.Header.Set("X-Mindmount-User", c.user)
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err == nil && resp.StatusCode/100 == 2 {
		c.st.served.Add(1)
	}
	return resp, err
}

func (st *stats) client(user string, timeout time.Duration) *http.Client {
	return &http.Client{Transport: counting{user, st}, Timeout: timeout}
}

// post sends body to base+path as user and returns the status (0: no
// answer) and the answer.
func (st *stats) post(ctx context.Context, base, path, user, body string) (int, []byte) {
	req, _ := http.NewRequestWithContext(ctx, "POST", base+path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	resp, err := st.client(user, 2*time.Minute).Do(req)
	if err != nil {
		return 0, nil
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp.StatusCode, b
}

// httpWrite chats "w-N" as user and says bye, waiting for the memory:
// acknowledged when the bye's consolidation added it. (A transcript
// never reaches git: a bye that lands after the user moved to another
// node finds nothing to consolidate there, and the write is tried
// again.)
func (st *stats) httpWrite(ctx context.Context, base, user string, n int) bool {
	sess := fmt.Sprintf("s%d", n)
	msg, _ := json.Marshal(map[string]string{"userId": user, "message": fmt.Sprintf("Remember w-%d please", n), "sessionId": sess})
	if code, _ := st.post(ctx, base, "/v1/chat", user, string(msg)); code != 200 {
		return false
	}
	bye, _ := json.Marshal(map[string]string{"userId": user, "sessionId": sess})
	code, body := st.post(ctx, base, "/v1/bye?wait=1", user, string(bye))
	var res struct {
		Added int `json:"added"`
	}
	json.Unmarshal(body, &res)
	if code == 200 && res.Added == 0 {
		st.mu.Lock()
		st.byeEmpty++
		st.mu.Unlock()
	}
	if code != 200 || res.Added == 0 {
		return false
	}
	// A bye consolidates every transcript pending on the node, not only
	// its session's: "added" may be another chat's. The write counts
	// once the owner recalls w-N.
	req, _ := http.NewRequestWithContext(ctx, "GET", fmt.Sprintf("%s/v1/recall?userId=%s&q=w-%d", base, user, n), nil)
	resp, err := st.client(user, time.Minute).Do(req)
	if err != nil {
		return false
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp.StatusCode == 200 && strings.Contains(string(b), fmt.Sprintf("/w-%d.md\"", n))
}

// mcpWrite creates the memory w-N as user in an MCP session of its own.
func (st *stats) mcpWrite(ctx context.Context, base, user string, n int) bool {
	cl := mcp.NewClient(&mcp.Implementation{Name: "cluster-long", Version: "1"}, nil)
	cs, err := cl.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: base + "/mcp", HTTPClient: st.client(user, 2*time.Minute), MaxRetries: -1}, nil)
	if err != nil {
		return false
	}
	defer cs.Close()
	text := fmt.Sprintf("---\ndescription: The write w-%d over MCP\nstatus: active\n---\n# Write %d\n\n## Fact\nYou wrote w-%d.\n\n## Access log\n", n, n, n)
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "create", Arguments: map[string]any{"path": fmt.Sprintf("user_memory/w-%d.md", n), "file_text": text}})
	return err == nil && !res.IsError
}

// writer writes through nginx until stop: a random user, HTTP or MCP
// in turn, each write tried again (under a new number: only the
// acknowledged ones are checked) until acknowledged, 90 s at most.
func (r *rig) writer(ctx context.Context, stop <-chan struct{}, id int, st *stats) {
	rng := rand.New(rand.NewPCG(uint64(id), 39))
	for i := 0; ; i++ {
		select {
		case <-stop:
			return
		case <-ctx.Done():
			return
		default:
		}
		user := r.users[rng.IntN(len(r.users))]
		viaMCP := i%2 == 1
		deadline := time.Now().Add(90 * time.Second)
		for {
			n := int(st.counter.Add(1)) // a write tried again is a new one
			ok := false
			if viaMCP {
				ok = st.mcpWrite(ctx, r.nginx, user, n)
			} else {
				ok = st.httpWrite(ctx, r.nginx, user, n)
			}
			if ok {
				st.ack(user, n, viaMCP)
				break
			}
			if time.Now().After(deadline) || ctx.Err() != nil {
				st.mu.Lock()
				st.unacked++
				st.mu.Unlock()
				break
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
}
