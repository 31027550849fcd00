package memgraph

import (
	"fmt"
	"sort"
	"strings"
)

// A topic names what a memory is about, not its value: "home-city", "diet",
// "job", "partner", "reply-style". Consolidation writes it on ADD and
// UPDATE and offers every active memory of the same kind and topic as a
// candidate for a new fact, so "moved to Lisbon" meets "lives in Porto"
// although they share no word. People and agents may set it too.

// MaxTopicLen bounds a topic: a few words, never a sentence.
const MaxTopicLen = 40

// ValidTopic is the one rule for a topic, in frontmatter and from a model:
// 1 to MaxTopicLen characters of a-z, 0-9 and single inner dashes. No dot
// or slash, so a topic is never a path.
func ValidTopic(s string) bool {
	if s == "" || len(s) > MaxTopicLen || s[0] == '-' || s[len(s)-1] == '-' {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
		case c == '-' && s[i-1] != '-':
		default:
			return false
		}
	}
	return true
}

// SetTopic sets the topic key (removed when empty). Callers pass a valid
// topic; anything else would make the file invalid, which Validate reports.
func (m *Memory) SetTopic(s string) {
	s = SafeLine(s)
	m.setKey("topic", s)
	m.Front.Topic = s
}

// TopicConflict is a likely missed contradiction: two or more active
// memories of one kind share a topic whose memories were retired before,
// so the topic is one that holds a single value at a time.
type TopicConflict struct {
	Kind    Kind
	Topic   string
	Active  []string // paths, sorted
	Retired int
}

// String is the warning mindmount check prints.
func (c TopicConflict) String() string {
	return fmt.Sprintf("%s memories share the topic %q while %d of its memories were retired before: %s — a likely missed contradiction; retire the outdated one (status: contradicted)",
		c.Kind, c.Topic, c.Retired, strings.Join(c.Active, ", "))
}

// TopicConflicts lists the likely missed contradictions of g, by kind
// and topic.
func (g *Graph) TopicConflicts() []TopicConflict {
	var out []TopicConflict
	for _, kind := range []Kind{KindUser, KindCharacter} {
		active := map[string][]string{}
		retired := map[string]int{}
		for _, m := range g.Memories(kind) {
			if m.Front.Topic == "" {
				continue
			}
			if m.Active() {
				active[m.Front.Topic] = append(active[m.Front.Topic], m.Path)
			} else {
				retired[m.Front.Topic]++
			}
		}
		topics := make([]string, 0, len(active))
		for t := range active {
			topics = append(topics, t)
		}
		sort.Strings(topics)
		for _, t := range topics {
			if len(active[t]) >= 2 && retired[t] > 0 {
				out = append(out, TopicConflict{Kind: kind, Topic: t, Active: active[t], Retired: retired[t]})
			}
		}
	}
	return out
}
