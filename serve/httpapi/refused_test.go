package httpapi

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mindmount/mindmount/consolidate/llmtest"
	"github.com/mindmount/mindmount/serve/host"
)

// TestRefusedLeaveNoTrace (issue 23, item 9): a chat refused with 429 (the
// model queue is full), 400, 401, 403 or 413 writes nothing into any
// transcript, so nothing of it is consolidated.
func TestRefusedLeaveNoTrace(t *testing.T) {
	e := newEnv(t, "ollama", nil)
	tok, _, _ := NewToken(e.root, "alice", time.Now())
	hold := make(chan struct{})
	defer close(hold)
	for i := 0; i < 2; i++ {
		e.model.Queue(llmtest.KindOther, llmtest.Reply{Content: "held answer words", Hold: hold})
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for i := 0; i < 2+8; i++ {
		sid := strings.Repeat("s", i+1)
		go func() {
			req, _ := http.NewRequestWithContext(ctx, "POST", e.srv.URL+"/v1/chat", strings.NewReader(`{"userId":"alice","message":"hi","sessionId":"`+sid+`"}`))
			req.Header.Set("Authorization", "Bearer "+adminKey)
			if resp, err := http.DefaultClient.Do(req); err == nil {
				readAll(resp)
			}
		}()
	}
	for st := e.pool.Stats(); st.Running != 2 || st.Queued != 8; st = e.pool.Stats() {
		time.Sleep(time.Millisecond)
	}
	cases := []struct {
		name, bearer, body string
		want               int
	}{
		{"429", adminKey, `{"userId":"alice","message":"REFUSED-429","sessionId":"x"}`, 429},
		{"400", adminKey, `{"userId":"alice","message":"REFUSED-400","sessionId":"a\u0001b"}`, 400},
		{"401", "", `{"userId":"alice","message":"REFUSED-401","sessionId":"y"}`, 401},
		{"403", tok, `{"userId":"bob","message":"REFUSED-403","sessionId":"y"}`, 403},
		{"413", adminKey, `{"userId":"alice","sessionId":"z","message":"REFUSED-413 ` + strings.Repeat("a", DefaultMaxBody) + `"}`, 413},
	}
	for _, c := range cases {
		if code, body := e.status("POST", "/v1/chat", c.bearer, c.body); code != c.want {
			t.Errorf("%s: %d %v", c.name, code, body)
		}
	}
	for _, id := range []string{"alice", "bob"} {
		filepath.WalkDir(filepath.Join(host.UserDir(e.root, id), "transcripts"), func(p string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return nil
			}
			b, _ := os.ReadFile(p)
			if strings.Contains(string(b), "REFUSED-") {
				t.Errorf("%s holds a refused request:\n%s", p, b)
			}
			return nil
		})
	}
}
