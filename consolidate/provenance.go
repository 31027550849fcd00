package consolidate

import (
	"strings"

	"github.com/mindmount/mindmount/fs/gitrepo"
	"github.com/mindmount/mindmount/memgraph"
)

// Provenance says where a transcript came from when it is one batch from
// elsewhere rather than a conversation: a merged pull request or an issue
// (serve/github). Its Source labels the commit (Mindmount-Source) and the
// memories it adds (their source: line), and makes the transcript's facts
// one batch: siblings from one source never supersede each other.
type Provenance struct {
	Source string // "PR#231"
	URL    string // where it can be read
	Commit string // the merge commit, when there is one
}

// Line is the memory's source: line, "PR#231 https://… merge abc1234".
func (p Provenance) Line() string {
	parts := []string{p.Source}
	if p.URL != "" {
		parts = append(parts, p.URL)
	}
	if p.Commit != "" {
		parts = append(parts, "merge "+gitrepo.ShortHash(p.Commit))
	}
	return memgraph.ClipLine(memgraph.SafeLine(strings.Join(parts, " ")), 300)
}

// trailer is the commit trailer beside Mindmount-Source, "" for none.
func (p Provenance) trailer() string {
	var parts []string
	if p.URL != "" {
		parts = append(parts, memgraph.SafeLine(p.URL))
	}
	if p.Commit != "" {
		parts = append(parts, "merge "+memgraph.SafeLine(p.Commit))
	}
	if len(parts) == 0 {
		return ""
	}
	return "Mindmount-Provenance: " + memgraph.ClipLine(strings.Join(parts, " "), 300) + "\n"
}

// BatchOf is the batch a memory's source line names: its first word when
// it came from a Provenance ("PR#231"), "" for a conversation's
// ("consolidate transcripts/…").
func BatchOf(source string) string {
	first, _, _ := strings.Cut(strings.TrimSpace(source), " ")
	if first == "" || first == "consolidate" {
		return ""
	}
	return first
}

// provenance is the Provenance of transcript rel, if the Config names one.
func (c *Consolidator) provenance(rel string) (Provenance, bool) {
	if c.cfg.Provenance == nil {
		return Provenance{}, false
	}
	p, ok := c.cfg.Provenance(rel)
	p.Source = memgraph.ClipLine(strings.Join(strings.Fields(memgraph.SafeLine(p.Source)), "-"), 80)
	return p, ok && p.Source != ""
}

// memorySource is the source: line of a memory this chunk adds.
func (s *chunkRun) memorySource() string {
	if s.origin != nil {
		return s.origin.Line()
	}
	return "consolidate " + s.src
}

// sibling reports whether m came from the batch this chunk consolidates:
// a fact never contradicts a memory distilled from its own source (a
// decision and the convention that supports it would supersede each
// other).
func (s *chunkRun) sibling(m *memgraph.Memory) bool {
	return s.origin != nil && m != nil && BatchOf(m.Front.Source) == s.origin.Source
}
