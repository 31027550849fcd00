package consolidate

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/mindmount/mindmount/memgraph"
)

// Limits on the search terms a model may give per fact.
const (
	MaxSearchTerms = 5
	MaxSearchTerm  = 40
)

// cleanTopic normalises a model's topic ("Home City" -> "home-city") and
// drops it ("") when it still breaks memgraph.ValidTopic: too long, or not
// a name at all. A fact without a topic is consolidated as before.
func cleanTopic(s string) string {
	s = strings.TrimSpace(s)
	if s == "" || len(s) > 2*memgraph.MaxTopicLen || strings.ContainsAny(s, "/\\.") {
		return "" // a path or a sentence is not a topic
	}
	s = strings.ToLower(strings.Join(strings.FieldsFunc(s, func(r rune) bool { return r == ' ' || r == '_' || r == '-' }), "-"))
	if !memgraph.ValidTopic(s) {
		return ""
	}
	return s
}

// cleanSearch keeps at most MaxSearchTerms short one-line terms; paths,
// empty and over-long terms are dropped.
func cleanSearch(in []string) []string {
	var out []string
	for _, t := range in {
		t = strings.Join(strings.Fields(stripControl(strings.ToValidUTF8(t, ""))), " ")
		if t == "" || len([]rune(t)) > MaxSearchTerm || strings.ContainsAny(t, "/\\") || strings.Contains(t, "..") {
			continue
		}
		out = append(out, t)
		if len(out) == MaxSearchTerms {
			break
		}
	}
	return out
}

// stringsField reads an optional list of strings; a missing or null key is
// an empty list, anything else that is not a list of strings is an error.
func stringsField(m map[string]json.RawMessage, key string) ([]string, error) {
	v, ok := m[key]
	if !ok || string(v) == "null" {
		return nil, nil
	}
	var out []string
	if err := json.Unmarshal(v, &out); err != nil {
		return nil, fmt.Errorf("%q is not a list of strings", key)
	}
	return out, nil
}
