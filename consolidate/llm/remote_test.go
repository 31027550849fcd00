package llm

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strings"
	"testing"
)

// fakeChat is a ChatProvider answering from fields.
type fakeChat struct {
	answer string
	deltas []string
	err    error
	seen   []Message
}

func (f *fakeChat) Chat(_ context.Context, req ChatRequest) (string, error) {
	return f.answer + "|" + req.System + "|" + req.Prompt + "|" + req.SchemaName, f.err
}
func (f *fakeChat) Embed(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		out[i] = []float32{float32(len(t))}
	}
	return out, f.err
}
func (f *fakeChat) Name() string  { return "fake" }
func (f *fakeChat) Model() string { return "fake-model" }
func (f *fakeChat) Stream(_ context.Context, msgs []Message, on func(string) error) error {
	f.seen = msgs
	for _, d := range f.deltas {
		if err := on(d); err != nil {
			return err
		}
	}
	return f.err
}

// remotePair serves f over a unix socket and returns a Remote reaching it.
func remotePair(t *testing.T, f ChatProvider) *Remote {
	t.Helper()
	name := "@mindmount-test-" + strings.ReplaceAll(t.Name(), "/", "-")
	ln, err := net.Listen("unix", name)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: ServeRemote(f)}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	r, err := NewRemote(context.Background(), func(ctx context.Context) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", name)
	})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestRemoteRoundTrip: a worker's calls reach the daemon's provider whole
// (chat, schema, embed, stream in order) and typed errors survive the hop,
// so the worker's chat still answers 429 on ErrBusy and consolidation
// still waits on ErrNoModel.
func TestRemoteRoundTrip(t *testing.T) {
	f := &fakeChat{answer: "ok", deltas: []string{"Hel", "lo", " ✓"}}
	r := remotePair(t, f)
	if r.Name() != "fake" || r.Model() != "fake-model" {
		t.Fatalf("info: %s %s", r.Name(), r.Model())
	}
	got, err := r.Chat(context.Background(), ChatRequest{System: "sys", Prompt: "p\nq", SchemaName: "mindmount_extract", Schema: []byte(`{"type":"object"}`)})
	if err != nil || got != "ok|sys|p\nq|mindmount_extract" {
		t.Fatalf("Chat = %q, %v", got, err)
	}
	v, err := r.Embed(context.Background(), []string{"ab", "abcd"})
	if err != nil || len(v) != 2 || v[1][0] != 4 {
		t.Fatalf("Embed = %v, %v", v, err)
	}
	var b strings.Builder
	if err := r.Stream(context.Background(), []Message{{Role: "user", Content: "hi"}}, func(d string) error { b.WriteString(d); return nil }); err != nil || b.String() != "Hello ✓" {
		t.Fatalf("Stream = %q, %v", b.String(), err)
	}
	if len(f.seen) != 1 || f.seen[0].Content != "hi" {
		t.Fatalf("the provider saw %v", f.seen)
	}
	for _, want := range []error{ErrBusy, ErrNoModel, ErrStreamCut, context.DeadlineExceeded} {
		f.err = want
		if _, err := r.Chat(context.Background(), ChatRequest{}); !errors.Is(err, want) {
			t.Errorf("Chat error %v arrived as %v", want, err)
		}
		if err := r.Stream(context.Background(), nil, func(string) error { return nil }); !errors.Is(err, want) {
			t.Errorf("Stream error %v arrived as %v", want, err)
		}
	}
	f.err = nil
	stop := errors.New("reader left")
	if err := r.Stream(context.Background(), nil, func(string) error { return stop }); !errors.Is(err, stop) {
		t.Errorf("the reader's own error: %v", err)
	}
}
