package llm

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"
)

// Remote is a Provider whose calls are made by another process: a serve
// worker (running as its user) reaches the model through the privileged
// daemon, which holds the model's key and the fair pool of all users.
// ServeRemote is the other end; the wire is JSON over HTTP on a socket the
// daemon hands out (Dial), so nothing but the calls crosses: no key, no
// other user's queue.
type Remote struct {
	hc             *http.Client
	name, model, e string
	share          string // shareHeader's value; "" is the chat share
}

// shareHeader says which share of the daemon's pool a Remote's call takes
// (Pool.For or Pool.Background).
const (
	shareHeader     = "Mindmount-Share"
	shareBackground = "background"
)

// Background returns a Remote whose calls take the daemon pool's
// consolidation share, so that a worker's consolidation never holds a
// slot its user's chats wait for. It shares r's connections.
func (r *Remote) Background() *Remote {
	c := *r
	c.share = shareBackground
	return &c
}

var (
	_ ChatProvider = (*Remote)(nil)
	_ Endpoint     = (*Remote)(nil)
)

// remoteMax bounds every answer read from the other end.
const remoteMax = 64 << 20

// NewRemote reaches the provider served at the other end of dial, and asks
// it once what it is (name, model, endpoint).
func NewRemote(ctx context.Context, dial func(ctx context.Context) (net.Conn, error)) (*Remote, error) {
	r := &Remote{hc: &http.Client{Transport: &http.Transport{
		DialContext:     func(ctx context.Context, _, _ string) (net.Conn, error) { return dial(ctx) },
		MaxIdleConns:    4,
		IdleConnTimeout: time.Minute,
	}}}
	var info remoteInfo
	if err := r.call(ctx, "/info", nil, &info); err != nil {
		return nil, err
	}
	r.name, r.model, r.e = info.Name, info.Model, info.Endpoint
	return r, nil
}

type remoteInfo struct {
	Name     string `json:"name"`
	Model    string `json:"model"`
	Endpoint string `json:"endpoint"`
}

type remoteChat struct {
	System     string          `json:"system"`
	Prompt     string          `json:"prompt"`
	SchemaName string          `json:"schema_name"`
	Schema     json.RawMessage `json:"schema,omitempty"`
}

// remoteEvent is one line of a streamed answer, or the end of any call.
type remoteEvent struct {
	Delta   string      `json:"d,omitempty"`
	Content string      `json:"content,omitempty"`
	Vectors [][]float32 `json:"vectors,omitempty"`
	Done    bool        `json:"done,omitempty"`
	Error   string      `json:"error,omitempty"`
	Kind    string      `json:"kind,omitempty"`
}

// Error kinds on the wire, so typed errors survive the hop.
var remoteKinds = []struct {
	kind string
	err  error
}{
	{"busy", ErrBusy},
	{"nomodel", ErrNoModel},
	{"cut", ErrStreamCut},
	{"nostream", ErrNoStream},
	{"timeout", context.DeadlineExceeded},
	{"canceled", context.Canceled},
}

func kindOf(err error) string {
	for _, k := range remoteKinds {
		if errors.Is(err, k.err) {
			return k.kind
		}
	}
	return ""
}

func (ev remoteEvent) err() error {
	if ev.Error == "" {
		return nil
	}
	for _, k := range remoteKinds {
		if k.kind == ev.Kind {
			return fmt.Errorf("%s: %w", ev.Error, k.err)
		}
	}
	return errors.New(ev.Error)
}

func (r *Remote) post(ctx context.Context, path string, in any) (*http.Response, error) {
	var body io.Reader = http.NoBody
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return nil, err
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://model"+path, body)
	if err != nil {
		return nil, err
	}
	if r.share != "" {
		req.Header.Set(shareHeader, r.share)
	}
	resp, err := r.hc.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("the daemon's model: %w: %v", ErrNoModel, err)
	}
	return resp, nil
}

// call makes one request and decodes its one answer into out.
func (r *Remote) call(ctx context.Context, path string, in, out any) error {
	resp, err := r.post(ctx, path, in)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	var ev remoteEvent
	b, err := io.ReadAll(io.LimitReader(resp.Body, remoteMax))
	if err != nil {
		return err
	}
	if out != nil && resp.StatusCode == http.StatusOK {
		return json.Unmarshal(b, out)
	}
	if err := json.Unmarshal(b, &ev); err != nil {
		return fmt.Errorf("the daemon's model answered %s", resp.Status)
	}
	return ev.err()
}

func (r *Remote) Name() string     { return r.name }
func (r *Remote) Model() string    { return r.model }
func (r *Remote) Endpoint() string { return r.e }

// Ping asks the daemon whether its model answers.
func (r *Remote) Ping(ctx context.Context) error { return r.call(ctx, "/ping", nil, nil) }

func (r *Remote) Chat(ctx context.Context, req ChatRequest) (string, error) {
	var ev remoteEvent
	if err := r.call(ctx, "/chat", remoteChat{System: req.System, Prompt: req.Prompt, SchemaName: req.SchemaName, Schema: req.Schema}, &ev); err != nil {
		return "", err
	}
	return ev.Content, ev.err()
}

func (r *Remote) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	var ev remoteEvent
	if err := r.call(ctx, "/embed", texts, &ev); err != nil {
		return nil, err
	}
	return ev.Vectors, ev.err()
}

// Stream reads the daemon's newline-delimited events until the end.
func (r *Remote) Stream(ctx context.Context, msgs []Message, onDelta func(string) error) error {
	resp, err := r.post(ctx, "/stream", msgs)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(io.LimitReader(resp.Body, remoteMax))
	sc.Buffer(make([]byte, 64<<10), MaxStreamBytes+4096)
	for sc.Scan() {
		var ev remoteEvent
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			return fmt.Errorf("the daemon's model stream: %w", ErrStreamCut)
		}
		if err := ev.err(); err != nil {
			return err
		}
		if ev.Done {
			return nil
		}
		if ev.Delta != "" {
			if err := onDelta(ev.Delta); err != nil {
				return err
			}
		}
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return fmt.Errorf("the daemon's model stream: %w", ErrStreamCut)
}

// ServeRemote answers a Remote's calls with p (a user's share of the
// daemon's pool; a call marked as consolidation takes p's Background
// share when p has one). Errors cross as their text and kind; the text of
// a provider error is already scrubbed of keys and secrets (scrubText).
func ServeRemote(p ChatProvider) http.Handler {
	s := remoteServer{p: p}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /info", s.info)
	mux.HandleFunc("POST /ping", s.ping)
	mux.HandleFunc("POST /chat", s.chat)
	mux.HandleFunc("POST /embed", s.embed)
	mux.HandleFunc("POST /stream", s.stream)
	return mux
}

// remoteServer answers one Remote's calls with p.
type remoteServer struct{ p ChatProvider }

// pick is p, or its Background share for a call marked as consolidation.
func (s remoteServer) pick(r *http.Request) ChatProvider {
	if bg, ok := s.p.(interface{ Background() ChatProvider }); ok && r.Header.Get(shareHeader) == shareBackground {
		return bg.Background()
	}
	return s.p
}

func reply(w http.ResponseWriter, ev remoteEvent, err error) {
	w.Header().Set("Content-Type", "application/json")
	if err != nil {
		w.WriteHeader(http.StatusBadGateway)
		ev = remoteEvent{Error: err.Error(), Kind: kindOf(err)}
	}
	json.NewEncoder(w).Encode(ev)
}

func decode(w http.ResponseWriter, r *http.Request, v any) bool {
	if err := json.NewDecoder(io.LimitReader(r.Body, remoteMax)).Decode(v); err != nil {
		w.WriteHeader(http.StatusBadRequest)
		json.NewEncoder(w).Encode(remoteEvent{Error: "bad request"})
		return false
	}
	return true
}

func (s remoteServer) info(w http.ResponseWriter, r *http.Request) {
	info := remoteInfo{Name: s.p.Name(), Model: s.p.Model()}
	if e, ok := s.p.(Endpoint); ok {
		info.Endpoint = e.Endpoint()
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(info)
}

func (s remoteServer) ping(w http.ResponseWriter, r *http.Request) {
	var err error
	if e, ok := s.p.(Endpoint); ok {
		err = e.Ping(r.Context())
	}
	reply(w, remoteEvent{Done: true}, err)
}

func (s remoteServer) chat(w http.ResponseWriter, r *http.Request) {
	var in remoteChat
	if !decode(w, r, &in) {
		return
	}
	out, err := s.pick(r).Chat(r.Context(), ChatRequest{System: in.System, Prompt: in.Prompt, SchemaName: in.SchemaName, Schema: in.Schema})
	reply(w, remoteEvent{Content: out, Done: true}, err)
}

func (s remoteServer) embed(w http.ResponseWriter, r *http.Request) {
	var texts []string
	if !decode(w, r, &texts) {
		return
	}
	v, err := s.pick(r).Embed(r.Context(), texts)
	reply(w, remoteEvent{Vectors: v, Done: true}, err)
}

func (s remoteServer) stream(w http.ResponseWriter, r *http.Request) {
	var msgs []Message
	if !decode(w, r, &msgs) {
		return
	}
	w.Header().Set("Content-Type", "application/x-ndjson")
	enc := json.NewEncoder(w)
	fl, _ := w.(http.Flusher)
	err := s.pick(r).Stream(r.Context(), msgs, func(d string) error {
		if err := enc.Encode(remoteEvent{Delta: d}); err != nil {
			return err
		}
		if fl != nil {
			fl.Flush()
		}
		return nil
	})
	if err != nil {
		enc.Encode(remoteEvent{Error: err.Error(), Kind: kindOf(err)})
		return
	}
	enc.Encode(remoteEvent{Done: true})
}
