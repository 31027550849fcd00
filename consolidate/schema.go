package consolidate

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/mindmount/mindmount/memgraph"
)

// Schema names double as the marker the fake model server uses to tell the
// two calls apart; they are also the OpenAI json_schema names.
const (
	SchemaExtract = "mindmount_extract"
	SchemaDecide  = "mindmount_decide"
)

// Limits on what a model may hand us. Larger values are cut (counts) or
// shortened (text), and the cut is reported.
const (
	MaxFacts          = 8
	MaxDescription    = 200
	MaxFactText       = 2000
	MaxEpisode        = 2000
	MaxSlugFromModel  = 80
	maxAnswerBytes    = 256 << 10
	maxJSONStartTries = 64
)

// extractSchema is the JSON schema of the extraction answer. "title" lets a
// server (and our fake) recognise the call; strict mode needs every
// property required and no extras.
var extractSchema = json.RawMessage(`{
  "title": "mindmount_extract",
  "type": "object",
  "properties": {
    "facts": {
      "type": "array",
      "maxItems": 8,
      "items": {
        "type": "object",
        "properties": {
          "kind": {"type": "string", "enum": ["user", "character"]},
          "slug": {"type": "string"},
          "description": {"type": "string"},
          "fact": {"type": "string"},
          "episode": {"type": "string"},
          "topic": {"type": "string"},
          "search": {"type": "array", "maxItems": 5, "items": {"type": "string"}},
          "keywords": {"type": "array", "maxItems": 8, "items": {"type": "string"}},
          "pinned": {"type": "boolean"}
        },
        "required": ["kind", "slug", "description", "fact", "episode", "topic", "search", "keywords", "pinned"],
        "additionalProperties": false
      }
    },
    "skills": {
      "type": "array",
      "maxItems": 3,
      "items": {
        "type": "object",
        "properties": {
          "name": {"type": "string"},
          "description": {"type": "string"},
          "body": {"type": "string"},
          "files": {
            "type": "array",
            "maxItems": 4,
            "items": {
              "type": "object",
              "properties": {
                "path": {"type": "string"},
                "content": {"type": "string"},
                "executable": {"type": "boolean"}
              },
              "required": ["path", "content", "executable"],
              "additionalProperties": false
            }
          }
        },
        "required": ["name", "description", "body", "files"],
        "additionalProperties": false
      }
    }
  },
  "required": ["facts", "skills"],
  "additionalProperties": false
}`)

// decideSchema is the JSON schema of the decision answer.
var decideSchema = json.RawMessage(`{
  "title": "mindmount_decide",
  "type": "object",
  "properties": {
    "decisions": {
      "type": "array",
      "items": {
        "type": "object",
        "properties": {
          "fact": {"type": "integer"},
          "action": {"type": "string", "enum": ["ADD", "UPDATE", "DELETE", "NONE"]},
          "target": {"type": "string"},
          "description": {"type": "string"},
          "text": {"type": "string"}
        },
        "required": ["fact", "action", "target", "description", "text"],
        "additionalProperties": false
      }
    }
  },
  "required": ["decisions"],
  "additionalProperties": false
}`)

// Fact is one durable fact the extraction found.
type Fact struct {
	Kind        string `json:"kind"` // "user" or "character"
	Slug        string `json:"slug"`
	Description string `json:"description"`
	Fact        string `json:"fact"`
	Episode     string `json:"episode"`
	// Topic names what the fact is about, not its value ("home-city");
	// Search are a few words to find related memories by. Both optional:
	// an answer without them behaves as before topics existed.
	Topic  string   `json:"topic,omitempty"`
	Search []string `json:"search,omitempty"`
	// Keywords are single lower-case words a later question about the
	// fact may use that its text does not ("food" for a rare steak); the
	// memory stores them as keywords: frontmatter, which recall searches.
	// Optional too: without them the search terms' words are used.
	Keywords []string `json:"keywords,omitempty"`
	// Pinned: the user marked the fact as one to always remember (an
	// allergy, "always remember…"); the memory gets pinned: true.
	Pinned bool `json:"pinned,omitempty"`
	// Tags are a batch's kind of fact (ProjectKinds: "decision"); the
	// memory stores them as tags:. None for a conversation's fact.
	Tags []string `json:"tags,omitempty"`
}

// Action is what the decision says to do with a fact.
type Action string

const (
	ActionAdd    Action = "ADD"
	ActionUpdate Action = "UPDATE"
	ActionDelete Action = "DELETE"
	ActionNone   Action = "NONE"
)

// Decision is the model's verdict for one fact.
type Decision struct {
	Fact        int    `json:"fact"`
	Action      Action `json:"action"`
	Target      string `json:"target"`
	Description string `json:"description"`
	Text        string `json:"text"`
}

// setKind checks the kind the model gave: "user" or "character" for a
// conversation; for a batch one of ProjectKinds, which becomes the tag of
// a "user" fact.
func (f *Fact) setKind(batch bool) error {
	given := f.Kind
	if batch {
		k, ok := projectKind(given)
		if !ok {
			return fmt.Errorf("kind %q is not %s", memgraph.ClipLine(given, 40), strings.Join(ProjectKinds, ", "))
		}
		f.Kind, f.Tags = string(memgraph.KindUser), []string{k}
		return nil
	}
	f.Kind = strings.ToLower(strings.TrimSpace(given))
	if f.Kind != "user" && f.Kind != "character" {
		return fmt.Errorf("kind %q is not user or character", memgraph.ClipLine(given, 40))
	}
	return nil
}

// batchExtractSchema is extractSchema with a batch's kinds.
var batchExtractSchema = sync.OnceValue(func() json.RawMessage {
	return json.RawMessage(strings.Replace(string(extractSchema),
		`"enum": ["user", "character"]`, `"enum": ["decision", "gotcha", "convention", "dead-end"]`, 1))
})

// firstJSONObject finds the first JSON object in a model answer that may be
// wrapped in a code fence or preceded by prose ("Sure! Here is…").
func firstJSONObject(s string) (json.RawMessage, error) {
	if len(s) > maxAnswerBytes {
		return nil, fmt.Errorf("the answer is %d bytes, more than the %d allowed", len(s), maxAnswerBytes)
	}
	b := []byte(s)
	off := 0
	for tries := 0; tries < maxJSONStartTries; tries++ {
		i := bytes.IndexByte(b[off:], '{')
		if i < 0 {
			break
		}
		off += i
		dec := json.NewDecoder(bytes.NewReader(b[off:]))
		dec.UseNumber()
		var raw json.RawMessage
		if err := dec.Decode(&raw); err == nil {
			return raw, nil
		}
		off++
	}
	return nil, fmt.Errorf("the answer holds no JSON object: %q", memgraph.ClipLine(strings.TrimSpace(s), 80))
}

// fields decodes one object into its raw members.
func fields(raw json.RawMessage) (map[string]json.RawMessage, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		return nil, fmt.Errorf("not an object")
	}
	return m, nil
}

func stringField(m map[string]json.RawMessage, key string, required bool) (string, error) {
	v, ok := m[key]
	if !ok || string(v) == "null" {
		if required {
			return "", fmt.Errorf("missing %q", key)
		}
		return "", nil
	}
	var s string
	if err := json.Unmarshal(v, &s); err != nil {
		return "", fmt.Errorf("%q is not a string", key)
	}
	return s, nil
}

// boolField reads an optional boolean: missing or null is false.
func boolField(m map[string]json.RawMessage, key string) (bool, error) {
	v, ok := m[key]
	if !ok || string(v) == "null" {
		return false, nil
	}
	var b bool
	if err := json.Unmarshal(v, &b); err != nil {
		return false, fmt.Errorf("%q is not true or false", key)
	}
	return b, nil
}

func intField(m map[string]json.RawMessage, key string) (int, error) {
	v, ok := m[key]
	if !ok {
		return 0, fmt.Errorf("missing %q", key)
	}
	var n json.Number
	if len(v) == 0 || v[0] == '"' {
		return 0, fmt.Errorf("%q is not a number", key)
	}
	if err := json.Unmarshal(v, &n); err != nil {
		return 0, fmt.Errorf("%q is not a number", key)
	}
	i, err := n.Int64()
	if err != nil || i < 0 || i > 1<<20 {
		return 0, fmt.Errorf("%q is not a small non-negative integer", key)
	}
	return int(i), nil
}

// listField returns the items of the top-level array key. A missing or
// mistyped list means the answer is garbage: the whole run fails.
func listField(answer, key string) ([]json.RawMessage, error) {
	raw, err := firstJSONObject(answer)
	if err != nil {
		return nil, err
	}
	m, err := fields(raw)
	if err != nil {
		return nil, fmt.Errorf("the answer is not a JSON object")
	}
	v, ok := m[key]
	if !ok {
		return nil, fmt.Errorf("the answer has no %q list", key)
	}
	var items []json.RawMessage
	if err := json.Unmarshal(v, &items); err != nil {
		return nil, fmt.Errorf("%q in the answer is not a list", key)
	}
	return items, nil
}

// ParseFacts validates an extraction answer. Items that break the schema
// are skipped and described in problems; more than MaxFacts are cut.
func ParseFacts(answer string) (facts []Fact, problems []string, err error) {
	return parseFacts(answer, false)
}

// ParseBatchFacts validates the extraction answer of a batch (a pull
// request or an issue): each fact's kind is one of ProjectKinds; the fact
// becomes a user_memory/ fact tagged with it.
func ParseBatchFacts(answer string) (facts []Fact, problems []string, err error) {
	return parseFacts(answer, true)
}

func parseFacts(answer string, batch bool) (facts []Fact, problems []string, err error) {
	items, err := listField(answer, "facts")
	if err != nil {
		return nil, nil, err
	}
	for i, it := range items {
		if len(facts) == MaxFacts {
			problems = append(problems, fmt.Sprintf("the model returned %d facts; only the first %d are used", len(items), MaxFacts))
			break
		}
		f, perr := parseFact(it, batch)
		if perr != nil {
			problems = append(problems, fmt.Sprintf("fact %d skipped: %v", i, perr))
			continue
		}
		facts = append(facts, f)
	}
	return facts, problems, nil
}

func parseFact(raw json.RawMessage, batch bool) (Fact, error) {
	m, err := fields(raw)
	if err != nil {
		return Fact{}, err
	}
	var f Fact
	if f.Kind, err = stringField(m, "kind", true); err != nil {
		return f, err
	}
	if err := f.setKind(batch); err != nil {
		return f, err
	}
	if f.Slug, err = stringField(m, "slug", false); err != nil {
		return f, err
	}
	if f.Description, err = stringField(m, "description", true); err != nil {
		return f, err
	}
	if f.Fact, err = stringField(m, "fact", true); err != nil {
		return f, err
	}
	if f.Episode, err = stringField(m, "episode", false); err != nil {
		return f, err
	}
	if f.Topic, err = stringField(m, "topic", false); err != nil {
		return f, err
	}
	if f.Search, err = stringsField(m, "search"); err != nil {
		return f, err
	}
	if f.Keywords, err = stringsField(m, "keywords"); err != nil {
		return f, err
	}
	if f.Pinned, err = boolField(m, "pinned"); err != nil {
		return f, err
	}
	f.Slug = shorten(strings.TrimSpace(f.Slug), MaxSlugFromModel)
	f.Description = cleanDescription(f.Description)
	f.Fact = cleanBody(f.Fact, MaxFactText)
	f.Episode = cleanBody(f.Episode, MaxEpisode)
	f.Topic = cleanTopic(f.Topic)
	f.Search = cleanSearch(f.Search)
	// The search terms are the fallback: they too name the fact in words
	// a question may use (the prompt asks for words the fact does not).
	f.Keywords = cleanKeywords(append(f.Keywords, f.Search...))
	if f.Description == "" && f.Fact == "" {
		return f, fmt.Errorf("empty description and fact")
	}
	if f.Description == "" {
		f.Description = cleanDescription(f.Fact)
	}
	if f.Fact == "" {
		f.Fact = f.Description
	}
	return f, nil
}

// ParseDecisions validates a decision answer for nFacts facts: fact indexes
// in range, known actions, at most one decision per fact.
func ParseDecisions(answer string, nFacts int) (ds []Decision, problems []string, err error) {
	items, err := listField(answer, "decisions")
	if err != nil {
		return nil, nil, err
	}
	parsed := make([]Decision, len(items))
	perrs := make([]error, len(items))
	for i, it := range items {
		parsed[i], perrs[i] = parseDecision(it)
	}
	if oneBased(parsed, perrs, nFacts) {
		// The facts are numbered from 0 in the prompt, but some models
		// count from 1; when the numbers are exactly 1..n, that is what
		// happened.
		for i := range parsed {
			parsed[i].Fact--
		}
		problems = append(problems, "the model numbered the facts from 1; shifted")
	}
	seen := map[int]bool{}
	for i := range items {
		d, perr := parsed[i], perrs[i]
		switch {
		case perr != nil:
			problems = append(problems, fmt.Sprintf("decision %d skipped: %v", i, perr))
		case d.Fact >= nFacts:
			problems = append(problems, fmt.Sprintf("decision %d skipped: fact %d does not exist", i, d.Fact))
		case seen[d.Fact]:
			problems = append(problems, fmt.Sprintf("decision %d skipped: fact %d already has a decision", i, d.Fact))
		default:
			seen[d.Fact] = true
			ds = append(ds, d)
		}
	}
	return ds, problems, nil
}

// oneBased reports whether the valid decisions number the facts exactly
// 1..n, each once.
func oneBased(ds []Decision, errs []error, n int) bool {
	seen := map[int]bool{}
	for i, d := range ds {
		if errs[i] != nil {
			continue
		}
		if d.Fact < 1 || d.Fact > n || seen[d.Fact] {
			return false
		}
		seen[d.Fact] = true
	}
	return n > 0 && len(seen) == n
}

func parseDecision(raw json.RawMessage) (Decision, error) {
	m, err := fields(raw)
	if err != nil {
		return Decision{}, err
	}
	var d Decision
	if d.Fact, err = intField(m, "fact"); err != nil {
		return d, err
	}
	a, err := stringField(m, "action", true)
	if err != nil {
		return d, err
	}
	d.Action = Action(strings.ToUpper(strings.TrimSpace(a)))
	switch d.Action {
	case ActionAdd, ActionUpdate, ActionDelete, ActionNone:
	default:
		return d, fmt.Errorf("action %q is not ADD, UPDATE, DELETE or NONE", memgraph.ClipLine(a, 40))
	}
	if d.Target, err = stringField(m, "target", false); err != nil {
		return d, err
	}
	if d.Description, err = stringField(m, "description", false); err != nil {
		return d, err
	}
	if d.Text, err = stringField(m, "text", false); err != nil {
		return d, err
	}
	d.Target = strings.TrimSpace(d.Target)
	d.Description = cleanDescription(d.Description)
	d.Text = cleanBody(d.Text, MaxFactText)
	if d.Action != ActionAdd && d.Target == "" {
		return d, fmt.Errorf("%s needs a target", d.Action)
	}
	if d.Action == ActionUpdate && d.Text == "" && d.Description == "" {
		return d, fmt.Errorf("UPDATE without description or text")
	}
	return d, nil
}

// cleanDescription makes a one-line description of at most MaxDescription
// characters: it lives in YAML frontmatter and in the index.
func cleanDescription(s string) string {
	s = strings.Join(strings.Fields(strings.ToValidUTF8(s, "")), " ")
	s = stripControl(s)
	return shorten(s, MaxDescription)
}

// cleanBody trims a section body, limits its size and neutralises lines that
// would open a new section or frontmatter: a fact must not be able to forge
// an access log (and so its own use count) or a second Fact section.
func cleanBody(s string, max int) string {
	s = strings.TrimSpace(stripControl(strings.ToValidUTF8(s, "")))
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		t := strings.TrimLeft(l, " \t")
		if strings.HasPrefix(t, "#") || strings.HasPrefix(t, "---") {
			lines[i] = `\` + t
		}
	}
	return shorten(strings.Join(lines, "\n"), max)
}

// stripControl drops control characters (memgraph.IsControl) but newlines
// and tabs, and byte order marks, which are invisible and would hide in
// the middle of a fact.
func stripControl(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '\n' || r == '\t' {
			return r
		}
		if memgraph.IsControl(r) || r == '\ufeff' {
			return -1
		}
		return r
	}, s)
}

// shorten cuts s to at most max runes at a word boundary, marking the cut.
func shorten(s string, max int) string {
	if utf8.RuneCountInString(s) <= max {
		return s
	}
	r := []rune(s)[:max-1]
	cut := string(r)
	if i := strings.LastIndexAny(cut, " \n"); i > len(cut)/2 {
		cut = cut[:i]
	}
	return strings.TrimSpace(cut) + "…"
}
