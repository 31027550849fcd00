package httpapi

import (
	"context"
	"io"
	"net/url"
	"strings"
	"testing"

	"github.com/mindmount/mindmount/memgraph/scopetest"
)

// TestRecallAndPromptCanaries: /v1/recall under every scope and the chat
// system prompt built for the model, for alice attached to team eng, show
// no canary of another user or of team ops; each hit names its scope.
func TestRecallAndPromptCanaries(t *testing.T) {
	e := newEnv(t, "ollama", nil)
	scopetest.WriteMemories(t, e.userPath("alice", ""), scopetest.Personal)
	scopetest.WriteMemories(t, e.userPath("bob", ""), scopetest.OtherUser)
	rt, release, err := e.h.Acquire(context.Background(), "alice")
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	_ = scopetest.Attach(t, rt.Graph)
	get := func(q string) (int, string) {
		resp := e.do("GET", "/v1/recall?"+q, adminKey, "")
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	for _, w := range scopetest.Words {
		for _, sc := range []string{"", "all", "personal", "eng"} {
			want := w
			if sc == "personal" && w == scopetest.Team || sc == "eng" && w == scopetest.Personal {
				want = ""
			}
			code, body := get("userId=alice&k=20&q=" + url.QueryEscape(w) + "&scope=" + sc)
			if code != 200 {
				t.Fatalf("/v1/recall scope %q: %d %s", sc, code, body)
			}
			scopetest.Check(t, "/v1/recall scope "+sc, want, body)
			if want == scopetest.Team && !strings.Contains(body, `"scope":"eng"`) {
				t.Errorf("a team hit does not name its scope: %s", body)
			}
		}
		if code, body := get("userId=alice&q=" + w + "&scope=ops"); code != 400 {
			t.Errorf("scope ops (not attached): %d %s", code, body)
		}
		scopetest.Check(t, "chat system prompt", w, e.api.systemPrompt(context.Background(), rt.Graph, "what about "+w+"?"))
	}
}
