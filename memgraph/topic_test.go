package memgraph

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestValidTopic(t *testing.T) {
	for s, ok := range map[string]bool{
		"home-city": true, "diet": true, "job2": true, "a": true, strings.Repeat("a", MaxTopicLen): true,
		"": false, "Home-City": false, "home city": false, "home--city": false, "-diet": false, "diet-": false,
		"../etc": false, "a/b": false, "a.b": false, strings.Repeat("a", MaxTopicLen+1): false, "ümlaut": false,
	} {
		if ValidTopic(s) != ok {
			t.Errorf("ValidTopic(%q) = %v", s, !ok)
		}
	}
}

// TestTopicKey: topic is an allowed frontmatter key, read on the fast path
// and by the YAML parser alike, validated by ValidTopic, and written by
// SetTopic with an exact round trip.
func TestTopicKey(t *testing.T) {
	for _, fm := range []string{
		"description: Lives in Porto\ntopic: home-city\n",              // fast path
		"description: Lives in Porto\n# a comment\ntopic: home-city\n", // YAML parser
	} {
		data := "---\n" + fm + "---\n# Porto\n\n## Fact\nYou live in Porto.\n"
		m, probs := Parse("user_memory/lives-in-porto.md", []byte(data))
		if len(probs) > 0 || m.Front.Topic != "home-city" {
			t.Fatalf("%q: topic %q, problems %v", fm, m.Front.Topic, probs)
		}
		if string(m.Render()) != data {
			t.Fatalf("round trip changed the file")
		}
	}
	for _, bad := range []string{"topic: Home City", "topic: ../etc/passwd", "topic: [a, b]", "topic: a/b"} {
		data := "---\ndescription: x\n" + bad + "\n---\n# X\n"
		probs := Validate("user_memory/x.md", []byte(data), nil)
		if len(probs) != 1 || probs[0].Line != 3 || !strings.Contains(probs[0].Msg, "topic must be") {
			t.Errorf("%q: %v", bad, probs)
		}
	}
	m := NewMemory("user_memory/eats-fish.md", "Eats Fish", "Eats fish", "You eat fish.", "", time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC))
	m.SetTopic("diet")
	again, probs := Parse(m.Path, m.Render())
	if len(probs) > 0 || again.Front.Topic != "diet" || !strings.Contains(string(m.Render()), "\ntopic: diet\n") {
		t.Fatalf("SetTopic:\n%s\n%v", m.Render(), probs)
	}
	m.SetTopic("")
	if strings.Contains(string(m.Render()), "topic") {
		t.Fatal("SetTopic(\"\") kept the key")
	}
}

func TestTopicConflicts(t *testing.T) {
	dir := t.TempDir()
	write := func(rel, status, topic string) {
		p := filepath.Join(dir, rel)
		os.MkdirAll(filepath.Dir(p), 0o755)
		data := "---\ndescription: " + rel + "\nstatus: " + status + "\n"
		if topic != "" {
			data += "topic: " + topic + "\n"
		}
		if err := os.WriteFile(p, []byte(data+"---\n# T\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("user_memory/lives-in-porto.md", "contradicted", "home-city")
	write("user_memory/lives-in-lisbon.md", "active", "home-city")
	write("user_memory/lives-in-braga.md", "active", "home-city")
	write("user_memory/likes-tea.md", "active", "drinks")    // two active, never retired:
	write("user_memory/likes-coffee.md", "active", "drinks") // not a conflict
	write("character_memory/brief.md", "active", "reply-style")
	g, err := Scan(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	cs := g.TopicConflicts()
	if len(cs) != 1 || cs[0].Topic != "home-city" || cs[0].Retired != 1 || len(cs[0].Active) != 2 || cs[0].Kind != KindUser {
		t.Fatalf("conflicts %+v", cs)
	}
	if s := cs[0].String(); !strings.Contains(s, "user_memory/lives-in-braga.md, user_memory/lives-in-lisbon.md") {
		t.Fatalf("warning %q", s)
	}
}

// FuzzTopicKey: the fast path and the YAML parser read a topic line the
// same way, and an accepted topic is always valid.
func FuzzTopicKey(f *testing.F) {
	for _, s := range []string{"home-city", "Home City", "a/b", "'diet'", "diet #c", "-x", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		data := []byte("---\ndescription: x\ntopic: " + v + "\n---\n# T\n")
		fast, fastProbs := Parse("user_memory/x.md", data)
		noFastPath = true
		slow, slowProbs := Parse("user_memory/x.md", data)
		noFastPath = false
		if len(fastProbs) != len(slowProbs) || fast.Front.Topic != slow.Front.Topic {
			t.Fatalf("fast %q %v, slow %q %v", fast.Front.Topic, fastProbs, slow.Front.Topic, slowProbs)
		}
		if fast.Front.Topic != "" && !ValidTopic(fast.Front.Topic) {
			t.Fatalf("invalid topic %q accepted", fast.Front.Topic)
		}
	})
}
