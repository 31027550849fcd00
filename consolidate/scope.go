package consolidate

import (
	"cmp"
	"fmt"
	"strings"

	"github.com/mindmount/mindmount/memgraph"
)

// TeamProposal is a change consolidation would make to a team's memory:
// it never writes a team repository (it writes only the personal one),
// so the change is handed to the team's review instead. Content is the
// whole memory file as it would read after the change, ready to be
// committed on a proposal branch of the team repository; Base the file
// as consolidation saw it, so a team memory changed meanwhile can be
// told apart (and merged, or shown as a conflict).
type TeamProposal struct {
	Team   string // the scope's name ("eng")
	Path   string // the memory's path inside the team repository
	Action Action // ActionUpdate (a refinement) or ActionDelete (a contradiction: Content retires it)
	Fact   Fact   // the fact from the conversation that prompted it
	Source string // where the fact was said: "transcripts/s1.jsonl#1-5"
	Base   []byte
	// Content is the proposed file; for a contradiction the memory
	// marked contradicted (the new fact itself is added to the personal
	// repository, as for any contradiction).
	Content []byte
}

// teamScope returns the attached team a labelled path shared/<team>/<rel>
// is in, with rel; ok false for a personal path or a team not offered.
func (s *chunkRun) teamScope(path string) (sc memgraph.Scope, rel string, ok bool) {
	team, rel := memgraph.ScopeOf(path)
	if team == memgraph.ScopePersonal {
		return sc, "", false
	}
	for _, x := range s.c.cfg.Scopes {
		if x.Name == team {
			return x, rel, true
		}
	}
	return sc, "", false
}

// teamMemory is the active, writable team memory a candidate path names,
// nil for a personal path or anything else.
func (s *chunkRun) teamMemory(path string) *memgraph.Memory {
	sc, rel, ok := s.teamScope(path)
	if !ok || !allowedMemoryPath(rel) {
		return nil
	}
	m := sc.Graph.Get(rel)
	if m == nil || !m.Active() || m.Front.ReadOnly {
		return nil
	}
	return m
}

// teamDecision plans a decision whose target is a team memory and reports
// whether it did: NONE means the team already knows the fact (nothing is
// written anywhere); UPDATE becomes a TeamProposal; DELETE adds the new
// fact to the personal repository and proposes to retire the team's.
func (p *planner) teamDecision(i int, f Fact, d *Decision) bool {
	if d.Action == ActionAdd {
		return false
	}
	target := d.Target
	if !strings.HasSuffix(target, ".md") {
		target += ".md" // the prompt names memories without it
	}
	sc, rel, ok := p.s.teamScope(target)
	if !ok {
		return false
	}
	m := p.s.teamMemory(target)
	if m == nil || !p.allowed[target] {
		p.out.skip(i, d, fmt.Sprintf("target %q is not a team memory shown to the model", d.Target))
		return true
	}
	base := m.Render()
	switch d.Action {
	case ActionNone:
		p.out.unchanged++
		return true
	case ActionUpdate:
		if d.Description != "" {
			m.SetDescription(d.Description)
		}
		m.SetFact(cmp.Or(d.Text, f.Fact))
	case ActionDelete:
		// The new fact is the person's: it is added to their repository
		// as an ADD; the team's memory is only proposed for retirement.
		p.apply(i, f, &Decision{Fact: d.Fact, Action: ActionAdd, Description: d.Description, Text: d.Text})
		m.SetStatus(memgraph.StatusContradicted, "")
	}
	p.out.proposals = append(p.out.proposals, TeamProposal{Team: sc.Name, Path: rel, Action: d.Action, Fact: f,
		Source: p.s.src, Base: base, Content: m.Render()})
	return true
}

// propose records a committed chunk's proposals in the report and hands
// each to OnProposal.
func (c *Consolidator) propose(rep *Report, ps []TeamProposal) {
	rep.Proposals = append(rep.Proposals, ps...)
	for _, p := range ps {
		c.log.Info("consolidation proposes a change to a team memory", "team", p.Team, "path", memgraph.SafeLine(p.Path), "action", string(p.Action))
		if c.cfg.OnProposal != nil {
			c.cfg.OnProposal(p)
		}
	}
}
