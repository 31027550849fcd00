package memgraph

import (
	"strings"
	"testing"
)

func TestPromoted(t *testing.T) {
	src := mem("", "Deploys freeze on Fridays", "", "No deploys on Fridays.", "01.01.26", "02.01.26")
	m, probs := Parse("user_memory/deploy-freeze.md", []byte(src))
	if len(probs) > 0 {
		t.Fatal(probs)
	}
	from := PromotedFrom("ali:ce", "abc123", "user_memory/deploy-freeze.md")
	out := string(Promoted(m, from).Render())
	for _, want := range []string{"promoted_from: ali_ce:abc123:user_memory/deploy-freeze.md\n", "## Access log\n", "No deploys on Fridays."} {
		if !strings.Contains(out, want) {
			t.Errorf("promoted memory lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "used, ") {
		t.Errorf("the access log came along:\n%s", out)
	}
	back, probs := Parse("user_memory/deploy-freeze.md", []byte(out))
	if len(probs) > 0 || back.Front.PromotedFrom != "ali_ce:abc123:user_memory/deploy-freeze.md" || back.Uses != 0 {
		t.Errorf("the promoted memory reads back as %+v, %v", back.Front, probs)
	}
	if len(Validate("user_memory/deploy-freeze.md", []byte(out), nil)) > 0 {
		t.Errorf("the promoted memory is not valid: %v", Validate("user_memory/deploy-freeze.md", []byte(out), nil))
	}
	if strings.Contains(string(m.Render()), "promoted_from") {
		t.Error("Promoted changed the original")
	}
}
