// Package golden holds consolidation's golden scenarios: a new
// fact that contradicts an old memory while sharing no word with it
// (relocation, diet, job, relationship, a reversed reply-style
// preference), and the converse (a fact on another topic that shares
// words with an unrelated memory). Run plays each against a fresh
// repository, the production clients and the fake model server of
// package llmtest, with a scripted model that follows the decision
// prompt's rules. It measures what consolidation controls: whether the
// memory to retire was among the candidates shown, and whether two
// contradictory memories were left active. Tests and "mindmount eval" use it.
package golden

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/mindmount/mindmount/consolidate"
	"github.com/mindmount/mindmount/consolidate/llm"
	"github.com/mindmount/mindmount/consolidate/llmtest"
	"github.com/mindmount/mindmount/fs/gitrepo"
	"github.com/mindmount/mindmount/fs/tracker"
	"github.com/mindmount/mindmount/memgraph"
)

// Memory is an existing memory of a scenario.
type Memory struct {
	Kind        string // "user" or "character"
	Slug        string
	Description string
	Fact        string
	Topic       string
}

// Path is the memory's repository path.
func (m Memory) Path() string {
	dir := memgraph.UserDir
	if m.Kind == "character" {
		dir = memgraph.CharacterDir
	}
	return dir + "/" + m.Slug + ".md"
}

func (m Memory) render() string {
	s := "---\ndescription: " + m.Description + "\nstatus: active\n"
	if m.Topic != "" {
		s += "topic: " + m.Topic + "\n"
	}
	return s + "---\n# " + m.Slug + "\n\n## Fact\n" + m.Fact + "\n\n## Access log\nused, 01.11.26\n"
}

// Scenario is one golden case.
type Scenario struct {
	Name   string
	Old    Memory
	Say    string           // what the user says in the transcript
	Fact   consolidate.Fact // the scripted extraction answer
	Retire bool             // true: Old must be retired; false: Old must stay as it is
}

// Scenarios are the built-in cases.
var Scenarios = []Scenario{
	{Name: "relocation", Retire: true,
		Old:  Memory{Kind: "user", Slug: "lives-in-porto", Description: "Lives in Porto", Fact: "You live in Porto.", Topic: "home-city"},
		Say:  "We moved to Lisbon last month.",
		Fact: consolidate.Fact{Kind: "user", Slug: "moved-to-lisbon", Description: "Moved to Lisbon last month", Fact: "You moved to Lisbon last month.", Topic: "home-city", Search: []string{"relocation", "new city"}}},
	{Name: "diet", Retire: true,
		Old:  Memory{Kind: "user", Slug: "is-vegetarian", Description: "Is vegetarian", Fact: "You are vegetarian.", Topic: "diet"},
		Say:  "I started eating fish again.",
		Fact: consolidate.Fact{Kind: "user", Slug: "eats-fish", Description: "Started eating fish again", Fact: "You started eating fish again.", Topic: "diet", Search: []string{"fish", "seafood"}}},
	{Name: "job", Retire: true,
		Old:  Memory{Kind: "user", Slug: "accountant-at-acme", Description: "Accountant at Acme", Fact: "You are an accountant at Acme.", Topic: "job"},
		Say:  "I joined Globex as a data analyst.",
		Fact: consolidate.Fact{Kind: "user", Slug: "analyst-at-globex", Description: "Data analyst at Globex", Fact: "You joined Globex as a data analyst.", Topic: "job", Search: []string{"employer", "analyst"}}},
	{Name: "relationship", Retire: true,
		Old:  Memory{Kind: "user", Slug: "partner-anna", Description: "Partner is Anna", Fact: "Your partner is Anna.", Topic: "partner"},
		Say:  "Ben and I got married in June.",
		Fact: consolidate.Fact{Kind: "user", Slug: "married-ben", Description: "Married Ben in June", Fact: "You married Ben in June.", Topic: "partner", Search: []string{"married", "spouse"}}},
	{Name: "reply-style reversed", Retire: true,
		Old:  Memory{Kind: "character", Slug: "detailed-explanations", Description: "Wants detailed explanations", Fact: "Give detailed, thorough explanations.", Topic: "reply-style"},
		Say:  "Please keep replies brief from now on, two sentences at most.",
		Fact: consolidate.Fact{Kind: "character", Slug: "brief-replies", Description: "Keep replies brief", Fact: "Keep replies brief: two sentences at most.", Topic: "reply-style", Search: []string{"brief", "short"}}},
	{Name: "converse: shared words, other topic", Retire: false,
		Old:  Memory{Kind: "user", Slug: "holidays-in-lisbon", Description: "Enjoys holidays in Lisbon", Fact: "You enjoy holidays in Lisbon.", Topic: "travel"},
		Say:  "We moved to Lisbon last month.",
		Fact: consolidate.Fact{Kind: "user", Slug: "moved-to-lisbon", Description: "Moved to Lisbon last month", Fact: "You moved to Lisbon last month.", Topic: "home-city", Search: []string{"relocation", "Lisbon"}}},
}

// Result is the outcome of one scenario.
type Result struct {
	Scenario Scenario
	Offered  bool   // Old was among the candidates shown to the model
	Retired  bool   // Old is no longer active afterwards
	Changed  bool   // Old's file changed at all
	Linked   bool   // Old names the new memory in superseded_by
	Err      string // the run failed
}

// OK reports whether the scenario met its goal.
func (r Result) OK() bool {
	if r.Err != "" {
		return false
	}
	if r.Scenario.Retire {
		return r.Offered && r.Retired && r.Linked
	}
	return !r.Changed
}

// Options tune Run.
type Options struct {
	Provider string // "ollama" (default) or "openai": which production client
	// NoTopics strips topics and search terms from the extraction answer:
	// consolidation as it was before topics and search terms, for comparison.
	NoTopics bool
}

// Run plays every scenario in its own temporary repository under tmp.
func Run(ctx context.Context, tmp string, opt Options) ([]Result, error) {
	var out []Result
	for i, sc := range Scenarios {
		dir := filepath.Join(tmp, fmt.Sprintf("scenario-%d", i))
		r, err := runOne(ctx, dir, sc, opt)
		if err != nil {
			r.Err = err.Error()
		}
		out = append(out, r)
	}
	return out, nil
}

// cleanup collects what llmtest.New registers.
type cleanup []func()

func (c *cleanup) Cleanup(f func()) { *c = append(*c, f) }

// scripted starts the fake model server and returns it, the production
// client provider names ("ollama" or "openai") pointed at it, and the
// function that stops it. The caller gives the server its script (Queue,
// Handle) before a run.
func scripted(provider string) (*llmtest.Server, llm.Provider, func()) {
	var cl cleanup
	srv := llmtest.New(&cl)
	var p llm.Provider = llm.NewOllama(srv.OllamaURL(), "scripted")
	if provider == "openai" {
		p = llm.NewOpenAI(srv.OpenAIURL(), "golden-key", "scripted")
	}
	return srv, p, func() {
		for _, f := range cl {
			f()
		}
	}
}

var when = time.Date(2026, 11, 29, 15, 0, 0, 0, time.UTC)

func runOne(ctx context.Context, dir string, sc Scenario, opt Options) (Result, error) {
	res := Result{Scenario: sc}
	files := map[string]string{
		".gitignore":   "/transcripts/*\n",
		"user.md":      "---\ndescription: Who the user is\n---\n# User\n",
		sc.Old.Path():  sc.Old.render(),
		"character.md": "---\ndescription: The assistant\n---\n# Character\n",
	}
	r, err := seedRepo(ctx, dir, files, fmt.Sprintf("{\"role\":\"user\",\"content\":%q}\n", sc.Say))
	if err != nil {
		return res, err
	}
	g, err := memgraph.Scan(dir)
	if err != nil {
		return res, err
	}
	defer g.Close()

	srv, p, stop := scripted(opt.Provider)
	defer stop()
	fact := sc.Fact
	if opt.NoTopics {
		fact.Topic, fact.Search = "", nil
	}
	srv.Queue(llmtest.KindExtract, llmtest.Reply{Content: llmtest.JSON(map[string]any{"facts": []consolidate.Fact{fact}})})
	srv.Handle(func(c llmtest.Call) llmtest.Reply {
		if c.Kind != llmtest.KindDecide {
			return llmtest.Reply{Content: `{"facts":[]}`}
		}
		return llmtest.Reply{Content: llmtest.JSON(map[string]any{"decisions": Decide(c.Prompt)})}
	})
	c := consolidate.New(tracker.New(g, r, tracker.Config{Logger: discard}), p, consolidate.Config{Now: func() time.Time { return when }, Logger: discard})
	if _, err := c.Run(ctx); err != nil {
		return res, err
	}
	for _, call := range srv.CallsOf(llmtest.KindDecide) {
		if strings.Contains(call.Prompt, "- path: "+strings.TrimSuffix(sc.Old.Path(), ".md")+"\n") {
			res.Offered = true
		}
	}
	after, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(sc.Old.Path())))
	if err != nil {
		return res, err
	}
	res.Changed = string(after) != sc.Old.render()
	m, _ := memgraph.Parse(sc.Old.Path(), after)
	res.Retired = m != nil && !m.Active()
	res.Linked = m != nil && m.Front.SupersededBy != ""
	return res, nil
}

// seedRepo makes a repository at dir holding files, committed, and
// transcript (JSONL) in the inbox.
func seedRepo(ctx context.Context, dir string, files map[string]string, transcript string) (*gitrepo.Repo, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	r, err := gitrepo.Init(dir)
	if err != nil {
		return nil, err
	}
	var changes []gitrepo.Change
	for rel, data := range files {
		abs := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(abs), 0o700); err != nil {
			return nil, err
		}
		if err := os.WriteFile(abs, []byte(data), 0o600); err != nil {
			return nil, err
		}
		changes = append(changes, gitrepo.Change{Path: rel, Data: []byte(data)})
	}
	if _, err := (tracker.Alone{Repo: r}).Apply(ctx, tracker.Change{Changes: changes, Message: "golden scenario", Author: gitrepo.Writer("golden"), When: when.Add(-time.Hour)}); err != nil {
		return nil, err
	}
	p := filepath.Join(dir, memgraph.TranscriptsDir, "chat.jsonl")
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return nil, err
	}
	return r, os.WriteFile(p, []byte(transcript), 0o600)
}

// Decide is the scripted model's decision: for each fact, DELETE the first
// candidate offered because it has the same topic (a single-valued topic,
// as the prompt's rule says), else ADD. It never merges a candidate that
// only matched by words.
func Decide(prompt string) []consolidate.Decision {
	var out []consolidate.Decision
	fact, target, path := -1, "", ""
	flush := func() {
		if fact < 0 {
			return
		}
		d := consolidate.Decision{Fact: fact, Action: consolidate.ActionAdd}
		if target != "" {
			d.Action, d.Target = consolidate.ActionDelete, target
		}
		out = append(out, d)
	}
	for _, line := range strings.Split(prompt, "\n") {
		switch {
		case strings.HasPrefix(line, "<fact number=\""):
			flush()
			fmt.Sscanf(line, "<fact number=\"%d\"", &fact)
			target, path = "", ""
		case strings.HasPrefix(line, "- path: "):
			path = strings.TrimPrefix(line, "- path: ")
		case strings.HasPrefix(line, "  offered because: ") && strings.Contains(line, "same topic") && target == "":
			target = path
		}
	}
	flush()
	return out
}
