package github

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"

	gh "github.com/google/go-github/v75/github"

	"github.com/mindmount/mindmount/consolidate"
	"github.com/mindmount/mindmount/memgraph"
)

// Item is a pull request or an issue as mindmount reads it: from an event
// payload (ParseEvent) and, for what a payload lacks, the hosting
// service's API (Client.Complete).
type Item struct {
	PR          bool   // a pull request, else an issue
	Action      string // the event's action: "opened", "closed", …
	Owner, Repo string
	Number      int
	Title, Body string
	URL         string
	Merged      bool
	MergeCommit string
	BaseRef     string   // the branch a pull request merges into
	HeadRef     string   // the branch it merges
	Comments    []string // review comments and comments, in order
	Paths       []string // the files a pull request changes
	Linked      []Linked // issues its text closes or names
}

// Linked is an issue a pull request's text names ("Fixes #12").
type Linked struct {
	Number int
	Title  string
}

// ErrEvent means an event payload is not a pull_request or issues event
// mindmount understands.
var ErrEvent = errors.New("not a pull_request or issues event")

// MaxEvent bounds an event payload read into memory.
const MaxEvent = 8 << 20

// ParseEvent reads a pull_request or issues event payload (the file
// $GITHUB_EVENT_PATH names).
func ParseEvent(data []byte) (Item, error) {
	if len(data) > MaxEvent {
		return Item{}, fmt.Errorf("%w: %d bytes, more than %d", ErrEvent, len(data), MaxEvent)
	}
	var probe struct {
		PullRequest json.RawMessage `json:"pull_request"`
		Issue       json.RawMessage `json:"issue"`
	}
	if err := json.Unmarshal(data, &probe); err != nil {
		return Item{}, fmt.Errorf("%w: %v", ErrEvent, err)
	}
	var it Item
	switch {
	case len(probe.PullRequest) > 0 && string(probe.PullRequest) != "null":
		var ev gh.PullRequestEvent
		if err := json.Unmarshal(data, &ev); err != nil {
			return it, fmt.Errorf("%w: %v", ErrEvent, err)
		}
		pr := ev.GetPullRequest()
		it = Item{PR: true, Action: ev.GetAction(), Number: pr.GetNumber(), Title: pr.GetTitle(), Body: pr.GetBody(),
			URL: pr.GetHTMLURL(), Merged: pr.GetMerged(), MergeCommit: pr.GetMergeCommitSHA(),
			BaseRef: pr.GetBase().GetRef(), HeadRef: pr.GetHead().GetRef()}
		it.Owner, it.Repo = ev.GetRepo().GetOwner().GetLogin(), ev.GetRepo().GetName()
	case len(probe.Issue) > 0 && string(probe.Issue) != "null":
		var ev gh.IssuesEvent
		if err := json.Unmarshal(data, &ev); err != nil {
			return it, fmt.Errorf("%w: %v", ErrEvent, err)
		}
		is := ev.GetIssue()
		it = Item{Action: ev.GetAction(), Number: is.GetNumber(), Title: is.GetTitle(), Body: is.GetBody(), URL: is.GetHTMLURL()}
		it.Owner, it.Repo = ev.GetRepo().GetOwner().GetLogin(), ev.GetRepo().GetName()
		it.PR = is.IsPullRequest()
	default:
		return it, ErrEvent
	}
	if it.Number <= 0 {
		return it, fmt.Errorf("%w: no number", ErrEvent)
	}
	it.Linked = linkedIssues(it.Body)
	return it, nil
}

// linkRE finds the issues a text closes or names: "Fixes #12", "#7".
var linkRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?:^|[\s(,;])#([0-9]{1,9})\b`) })

// linkedIssues are the issue numbers a body names, in order, each once.
func linkedIssues(body string) []Linked {
	seen := map[int]bool{}
	var out []Linked
	for _, m := range linkRE().FindAllStringSubmatch(body, 50) {
		n, err := strconv.Atoi(m[1])
		if err != nil || n <= 0 || seen[n] {
			continue
		}
		seen[n] = true
		out = append(out, Linked{Number: n})
	}
	return out
}

// Source is the item's batch label: "PR#231" or "issue#12".
func (it Item) Source() string {
	if it.PR {
		return "PR#" + strconv.Itoa(it.Number)
	}
	return "issue#" + strconv.Itoa(it.Number)
}

// TranscriptPath is where the item's text is put for consolidation: one
// file per item and version of its text (a short hash of Transcript), so
// the cursor knows an item it consumed, and an item whose text changed
// since is a new batch.
func (it Item) TranscriptPath() string {
	sum := sha256.Sum256(it.Transcript())
	kind := "issue"
	if it.PR {
		kind = "pr"
	}
	return fmt.Sprintf("%s/github/%s-%d-%s.md", memgraph.TranscriptsDir, kind, it.Number, hex.EncodeToString(sum[:4]))
}

// pathRE is a transcript path TranscriptPath makes.
var pathRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^` + memgraph.TranscriptsDir + `/github/(pr|issue)-([0-9]{1,9})-[0-9a-f]{8}\.md$`)
})

// ProvenanceOf is the provenance of a transcript TranscriptPath named
// (its label only), for one left unconsumed by an earlier run.
func ProvenanceOf(rel string) (consolidate.Provenance, bool) {
	m := pathRE().FindStringSubmatch(rel)
	if m == nil {
		return consolidate.Provenance{}, false
	}
	if m[1] == "pr" {
		return consolidate.Provenance{Source: "PR#" + m[2]}, true
	}
	return consolidate.Provenance{Source: "issue#" + m[2]}, true
}

// Provenance is the item's provenance for consolidation.
func (it Item) Provenance() consolidate.Provenance {
	return consolidate.Provenance{Source: it.Source(), URL: it.URL, Commit: it.MergeCommit}
}

// Transcript is the item as one document for consolidation: its title,
// where it is, the paths it changes, its body, comments and linked
// issues. The same item gives the same bytes, so ingesting it again finds
// it consumed. A line that would read as a chat turn ("User: …") is
// quoted: the document stays one message, one batch.
func (it Item) Transcript() []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s: %s\n\n", it.Source(), oneLine(it.Title))
	if it.URL != "" {
		fmt.Fprintf(&b, "URL: %s\n", oneLine(it.URL))
	}
	if it.MergeCommit != "" && it.Merged {
		fmt.Fprintf(&b, "Merge commit: %s\n", oneLine(it.MergeCommit))
	}
	if len(it.Paths) > 0 {
		paths := append([]string(nil), it.Paths...)
		sort.Strings(paths)
		fmt.Fprintf(&b, "Changed paths: %s\n", oneLine(strings.Join(paths, ", ")))
	}
	section := func(title, text string) {
		if text = strings.TrimSpace(text); text != "" {
			fmt.Fprintf(&b, "\n## %s\n\n%s\n", title, quoteTurns(text))
		}
	}
	section("Description", it.Body)
	for i, c := range it.Comments {
		section(fmt.Sprintf("Comment %d", i+1), c)
	}
	for _, l := range it.Linked {
		if l.Title != "" {
			section(fmt.Sprintf("Linked issue #%d", l.Number), l.Title)
		}
	}
	return []byte(b.String())
}

// oneLine folds s onto one line.
func oneLine(s string) string { return memgraph.SafeLine(strings.Join(strings.Fields(s), " ")) }

// quoteTurns quotes the lines consolidation would read as a chat turn.
func quoteTurns(text string) string {
	lines := strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n")
	for i, l := range lines {
		t := consolidate.ParseTranscript("line.md", []byte(l))
		for _, m := range t.Messages {
			if m.Role != consolidate.RoleDocument {
				lines[i] = "> " + l
				break
			}
		}
	}
	return strings.Join(lines, "\n")
}
