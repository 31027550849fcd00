package github

import (
	"context"
	"fmt"
	"strings"

	"github.com/mindmount/mindmount/consolidate"
	"github.com/mindmount/mindmount/memgraph"
)

// Proposal settles the waiting dreams of a project's memory clone with
// the hosting service: each becomes one pull request into the memory
// branch; one whose pull request was closed unmerged is rejected (the
// clone's cursor then covers its sources, so it is never proposed again).
type Proposal struct {
	Client *Client
	Dir    string // the memory clone
	// Reject rejects dream n in the clone (consolidate.Consolidator.Reject)
	// and Read reads a file at a commit of it (nil when absent).
	Reject func(ctx context.Context, n int, reason string) error
	Read   func(commit, rel string) []byte
}

// Outcome is what Run did, per dream branch.
type Outcome struct {
	Opened   []PR     // pull requests opened now
	Pending  []PR     // already proposed, still open
	Rejected []string // dreams rejected because their pull request was closed
	Merged   []string // dreams whose pull request was merged (the clone is behind)
	Empty    []string // dreams without memory changes, settled without a pull request
}

// noChange reports whether d adds, updates and retires nothing.
func noChange(d consolidate.Dream) bool {
	add, upd, ret := d.Counts()
	return add+upd+ret == 0
}

// Run proposes every dream in dreams that has no pull request yet and
// rejects those whose pull request was closed without merging.
func (p *Proposal) Run(ctx context.Context, dreams []consolidate.Dream) (Outcome, error) {
	var out Outcome
	prs, err := p.Client.DreamPRs(ctx)
	if err != nil {
		return out, err
	}
	rejected := false
	for _, d := range dreams {
		var same, open *PR
		for i := range prs {
			pr := &prs[i]
			if pr.HeadRef != d.Branch {
				continue
			}
			if pr.HeadSHA == d.Tip && same == nil {
				same = pr
			}
			if pr.Open && open == nil {
				open = pr
			}
		}
		switch {
		case same != nil && same.Open:
			out.Pending = append(out.Pending, *same)
		case same != nil && same.Merged:
			out.Merged = append(out.Merged, d.Branch)
		case same != nil:
			reason := fmt.Sprintf("pull request #%d was closed without merging", same.Number)
			if err := p.Reject(ctx, d.N, reason); err != nil {
				return out, err
			}
			rejected = true
			out.Rejected = append(out.Rejected, d.Branch)
			if err := DeleteRemote(ctx, p.Dir, d.Branch); err != nil {
				return out, err
			}
		case noChange(d):
			// Nothing to approve (the source held nothing durable): the
			// dream is settled at once, so its source counts as read.
			if err := p.Reject(ctx, d.N, "nothing to propose: no memory changes"); err != nil {
				return out, err
			}
			rejected = true
			out.Empty = append(out.Empty, d.Branch)
		case open != nil:
			return out, fmt.Errorf("%w: %s has an open pull request (#%d) for another proposal; fetch the dreams (mindmount init --project-branch clones them) and run again",
				ErrAPI, d.Branch, open.Number)
		default:
			// The remote may hold an old branch of this number whose pull
			// request was merged or closed: it is ours to replace.
			if err := Push(ctx, p.Dir, d.Branch, true); err != nil {
				return out, err
			}
			pr, err := p.Client.Open(ctx, d.Branch, Title(d), PRBody(d, p.Read))
			if err != nil {
				return out, err
			}
			out.Opened = append(out.Opened, pr)
		}
	}
	if rejected {
		// The rejections are commits of the memory branch (its cursor).
		if err := Push(ctx, p.Dir, MemoryBranch, false); err != nil {
			return out, err
		}
	}
	return out, nil
}

// Title is a dream's pull request title.
func Title(d consolidate.Dream) string {
	add, upd, ret := d.Counts()
	return memgraph.ClipLine(fmt.Sprintf("mindmount: memory from %s (%d added, %d updated, %d retired)", sources(d), add, upd, ret), 200)
}

func sources(d consolidate.Dream) string {
	if len(d.Sources) == 0 {
		return d.Branch
	}
	return strings.Join(d.Sources, ", ")
}

// PRBody is a dream's pull request body: what would be added, updated and
// retired, with the supersede links and the notes of its commits (what
// was kept beside what, and why), then what merging and closing do.
func PRBody(d consolidate.Dream, read func(commit, rel string) []byte) string {
	var b strings.Builder
	fmt.Fprintf(&b, "<!-- mindmount:dream %s %s -->\n", d.Branch, d.Tip)
	fmt.Fprintf(&b, "Memories distilled from %s by consolidation (`%s`).\n", mdText(sources(d)), d.Branch)
	for _, m := range d.Messages {
		for _, l := range strings.Split(m, "\n") {
			if v, ok := strings.CutPrefix(l, "Mindmount-Provenance: "); ok {
				fmt.Fprintf(&b, "Source: %s\n", mdText(v))
			}
		}
	}
	group := func(kind, title string) {
		var lines []string
		for _, ch := range d.Changes {
			if ch.Kind != kind {
				continue
			}
			l := fmt.Sprintf("- `%s` — %s", code(ch.Path), mdText(ch.Description))
			if m := memoryAt(read, d.Tip, ch.Path); m != nil {
				if m.Front.SupersededBy != "" {
					l += fmt.Sprintf(" — %s by `%s`", m.Front.Status, code(m.Front.SupersededBy))
				}
				if m.Front.Supersedes != "" {
					l += fmt.Sprintf(" — supersedes `%s`", code(m.Front.Supersedes))
				}
			}
			if ch.Fact != "" && kind != "contradicted" {
				l += "\n  > " + mdText(memgraph.ClipLine(memgraph.SafeLine(ch.Fact), 300))
			}
			lines = append(lines, l)
		}
		if len(lines) > 0 {
			fmt.Fprintf(&b, "\n### %s\n\n%s\n", title, strings.Join(lines, "\n"))
		}
	}
	group("added", "Added")
	group("updated", "Updated")
	group("contradicted", "Retired (superseded)")
	var notes []string
	for _, m := range d.Messages {
		in := false
		for _, l := range strings.Split(m, "\n") {
			switch {
			case l == "skipped:":
				in = true
			case in && strings.HasPrefix(l, "  "):
				notes = append(notes, "- "+mdText(strings.TrimSpace(l)))
			default:
				in = false
			}
		}
	}
	if len(notes) > 0 {
		fmt.Fprintf(&b, "\n### Notes from consolidation\n\n%s\n", strings.Join(notes, "\n"))
	}
	fmt.Fprintf(&b, "\nMerging lands these memories on `%s`. Closing this pull request rejects them: the next run sees it closed and does not propose them again.\n", MemoryBranch)
	return b.String()
}

// memoryAt parses rel at commit, nil when absent or unreadable.
func memoryAt(read func(commit, rel string) []byte, commit, rel string) *memgraph.Memory {
	if read == nil {
		return nil
	}
	data := read(commit, rel)
	if data == nil {
		return nil
	}
	m, _ := memgraph.Parse(rel, data)
	return m
}

// code makes s safe inside a markdown code span: one line, no backtick.
func code(s string) string {
	return strings.ReplaceAll(memgraph.SafeLine(s), "`", "'")
}
