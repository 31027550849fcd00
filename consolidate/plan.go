package consolidate

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"

	"github.com/mindmount/mindmount/fs/tracker"
	"github.com/mindmount/mindmount/memgraph"
)

// outcome is a planned set of file contents plus counts.
type outcome struct {
	files    map[string]*memgraph.Memory // rel -> new content
	touched  map[string][]int            // existing rel -> facts that change it
	created  map[string][]int            // new rel -> facts that create it
	problems []string
	skills   map[string]skillFile // files of skills/<name>/ -> new content (skill.go, skill_files.go)

	// The counts of the commit subject and the Report. added, updated and
	// contradicted count the files the commit writes (tally): a
	// contradiction adds the new fact's file and retires the old one, so
	// it counts once in each; two refinements of one memory are one
	// update; a refinement that changes no byte is none. unchanged counts
	// the facts found already remembered (their use stamped), skipped the
	// facts or decisions refused.
	added, updated, contradicted, unchanged, skipped int

	proposals []TeamProposal // decisions on team memories (scope.go)
}

func newOutcome() *outcome {
	return &outcome{files: map[string]*memgraph.Memory{}, skills: map[string]skillFile{}, touched: map[string][]int{}, created: map[string][]int{}}
}

// plan applies the decisions to the snapshot, in memory. No fact is lost
// to an odd answer: a decision naming a memory the model was not shown,
// one that does not exist or one retired meanwhile adds the fact as a new
// memory, and the odd target is reported. Facts of one chunk (one
// conversation) never contradict each other: a DELETE of a memory another
// fact of the chunk created, refined or confirmed adds the fact beside it
// instead. A path outside the memory folders, a read_only or invalid
// target, or a result that would be an invalid file is skipped, and
// reported.
func (s *chunkRun) plan(facts []Fact, cands [][]candidate, decs []*Decision) *outcome {
	p := &planner{
		s:       s,
		out:     newOutcome(),
		allowed: candidatePaths(cands),
		stamped: map[string]bool{},
		refined: map[string]bool{},
		retired: map[string]bool{},
		batch:   map[string]int{},
	}
	for i, f := range facts {
		p.apply(i, f, decs[i])
	}
	p.dropUnchanged()
	p.out.tally(p.refined, p.retired)
	return p.out
}

// planner is one plan in progress: the outcome so far and what the
// accepted decisions did to existing memories.
type planner struct {
	s       *chunkRun
	out     *outcome
	allowed map[string]bool // the candidate paths shown to the model
	stamped map[string]bool // memories whose use a NONE already stamped
	refined map[string]bool // existing memories an accepted update changes
	retired map[string]bool // existing memories an accepted contradiction retires
	batch   map[string]int  // memory -> the first fact of this chunk that wrote or confirmed it
}

// candidatePaths is the set of paths among the candidates: the only
// targets a decision may name.
func candidatePaths(cands [][]candidate) map[string]bool {
	allowed := map[string]bool{}
	for _, cs := range cands {
		for _, c := range cs {
			allowed[c.Path] = true
		}
	}
	return allowed
}

// apply plans fact i's decision d. Its changes are made on copies
// (pending) and replace the outcome's files only if all are valid.
func (p *planner) apply(i int, f Fact, d *Decision) {
	out := p.out
	if d == nil {
		out.skipped++
		out.problems = append(out.problems, fmt.Sprintf("fact %d (%q): the model gave no decision", i, f.Description))
		return
	}
	if p.teamDecision(i, f, d) {
		return
	}
	pending := map[string]*memgraph.Memory{}
	get := func(rel string) *memgraph.Memory { return p.get(pending, rel) }
	var target string
	if d.Action != ActionAdd {
		rel, why, add := p.target(d, get)
		if j, ok := p.batch[rel]; why == "" && ok && j != i && d.Action == ActionDelete {
			why, add = fmt.Sprintf("%q holds fact %d of the same conversation, which this one cannot contradict", d.Target, j), true
		}
		if why == "" && d.Action == ActionDelete && p.s.sibling(get(rel)) {
			why, add = fmt.Sprintf("%q was distilled from the same source, %s, which this fact cannot contradict", d.Target, p.s.src), true
		}
		switch {
		case why == "":
			target = rel
		case add:
			out.problems = append(out.problems, fmt.Sprintf("fact %d %s: %s; the fact was added as a new memory", i, d.Action, why))
			d = &Decision{Fact: d.Fact, Action: ActionAdd}
		default:
			out.skip(i, d, why)
			return
		}
	}
	created, err := p.change(f, d, target, pending, get)
	if err != nil {
		out.skip(i, d, err.Error())
		return
	}
	if bad := p.s.validate(pending); bad != "" {
		out.skip(i, d, bad)
		return
	}
	for _, rel := range []string{target, created} {
		if _, ok := p.batch[rel]; rel != "" && !ok && !(d.Action == ActionDelete && rel == target) {
			p.batch[rel] = i
		}
	}
	switch d.Action {
	case ActionUpdate:
		p.refined[target] = true
	case ActionDelete:
		p.retired[target] = true
	case ActionNone:
		out.unchanged++
	}
	for rel, m := range pending {
		out.files[rel] = m
	}
	if target != "" {
		out.touched[target] = append(out.touched[target], i)
	}
	if created != "" {
		out.created[created] = append(out.created[created], i)
	}
}

// get returns the memory at rel as this decision sees it: its pending
// copy, a copy of what earlier decisions planned, or the snapshot's.
func (p *planner) get(pending map[string]*memgraph.Memory, rel string) *memgraph.Memory {
	if m := pending[rel]; m != nil {
		return m
	}
	if m := p.out.files[rel]; m != nil {
		pending[rel] = m.Clone()
		return pending[rel]
	}
	if m := p.s.load(rel); m != nil {
		pending[rel] = m
		return m
	}
	return nil
}

// target checks the memory a non-ADD decision names and returns its path,
// or why it cannot be used and whether the fact is then added as a new
// memory: yes for a memory path the model was not shown or that does not
// exist, or one retired meanwhile (the fact is not lost to an odd
// target); no for a path outside the memory folders (an injection) or a
// memory that is invalid or read_only (a person's protection covers its
// subject).
func (p *planner) target(d *Decision, get func(string) *memgraph.Memory) (rel, why string, add bool) {
	rel, err := targetPath(d.Target)
	if err != nil {
		return "", err.Error(), false
	}
	if !p.allowed[rel] {
		if p.s.exists(rel) {
			if m := p.s.load(rel); m == nil || m.Front.ReadOnly || p.s.c.g.ReadOnly(rel) {
				return "", fmt.Sprintf("target %q is invalid or is read_only", d.Target), false
			}
		}
		return "", fmt.Sprintf("target %q is not one of the candidates shown to the model", d.Target), true
	}
	m := get(rel)
	if m == nil || p.s.c.g.ReadOnly(rel) || m.Front.ReadOnly {
		return "", fmt.Sprintf("target %q does not exist, is invalid or is read_only", d.Target), false
	}
	if !m.Active() && d.Action != ActionNone {
		return "", fmt.Sprintf("target %q is no longer active", d.Target), true
	}
	return rel, "", false
}

// change makes decision d's edits in pending and returns the path of the
// memory it creates, if any; an error when no name is free for it.
func (p *planner) change(f Fact, d *Decision, target string, pending map[string]*memgraph.Memory, get func(string) *memgraph.Memory) (string, error) {
	var created string
	var err error
	switch d.Action {
	case ActionAdd:
		created, err = p.s.newMemory(f, "", "", p.out, pending)
	case ActionUpdate:
		m := get(target)
		if f.Pinned && !m.Front.Pinned {
			m.SetPinned(true)
		}
		if d.Description != "" {
			m.SetDescription(d.Description)
		}
		m.SetFact(cmp.Or(d.Text, f.Fact))
		if f.Topic != "" && m.Front.Topic == "" {
			m.SetTopic(f.Topic) // a topic someone set stays
		}
		if kw := mergeKeywords(m.Front.Keywords, f.Keywords); len(kw) > len(m.Front.Keywords) {
			m.SetKeywords(kw) // keywords someone wrote stay, in their form
		}
		if ep := strings.TrimSpace(f.Episode); ep != "" && !strings.Contains(m.Episode, ep) {
			m.SetEpisode(strings.TrimSpace(m.Episode + "\n" + ep))
		}
	case ActionDelete:
		// A contradiction never loses the new fact: it is added, and
		// the old memory is retired and linked to it.
		if created, err = p.s.newMemory(f, d.Description, d.Text, p.out, pending); err != nil {
			return "", err
		}
		pending[created].SetSupersedes(targetName(target))
		get(target).SetStatus(memgraph.StatusContradicted, targetName(created))
	case ActionNone:
		if !p.stamped[target] {
			get(target).AddUse(p.s.now)
			p.stamped[target] = true
		}
		if m := get(target); f.Pinned && !m.Front.Pinned && m.Active() {
			m.SetPinned(true)
		}
	}
	return created, err
}

// dropUnchanged removes the planned files whose bytes equal the
// snapshot's: NONE stamps that changed nothing are not files to write.
func (p *planner) dropUnchanged() {
	for rel, m := range p.out.files {
		if old, ok := p.s.snap[rel]; ok && bytes.Equal(old, m.Render()) {
			delete(p.out.files, rel)
		}
	}
}

// tally counts the files the commit writes: each one once, as new (added),
// as an existing memory retired by a contradiction (contradicted), or as
// one whose fact a refinement changed (updated). Files changed only by a
// use stamp are not counted here (unchanged counts their facts).
func (o *outcome) tally(refined, retired map[string]bool) {
	o.added, o.updated, o.contradicted = 0, 0, 0
	for rel := range o.files {
		switch {
		case o.created[rel] != nil:
			o.added++
		case retired[rel]:
			o.contradicted++
		case refined[rel]:
			o.updated++
		}
	}
}

// exists reports whether rel is on disk (whatever it holds).
func (s *chunkRun) exists(rel string) bool {
	_, err := s.c.r.Tree().Lstat(rel)
	return err == nil
}

func (o *outcome) skip(i int, d *Decision, why string) {
	o.skipped++
	o.problems = append(o.problems, fmt.Sprintf("fact %d %s: %s", i, d.Action, why))
}

// targetPath turns a model-supplied target into a repo path, refusing
// anything that is not a memory file directly in the memory folders.
func targetPath(t string) (string, error) {
	t = strings.TrimPrefix(strings.TrimSpace(t), "./")
	rel := strings.TrimSuffix(t, ".md") + ".md"
	if strings.HasPrefix(t, "/") || strings.Contains(t, "\\") || path.Clean(rel) != rel || !allowedMemoryPath(rel) {
		return "", fmt.Errorf("target %q is not a memory in user_memory/ or character_memory/", memgraph.ClipLine(t, 80))
	}
	return rel, nil
}

// newMemory plans a new memory file for f and returns its path, or
// memgraph.ErrNoFreeSlug.
func (s *chunkRun) newMemory(f Fact, desc, text string, out *outcome, pending map[string]*memgraph.Memory) (string, error) {
	dir := memgraph.UserDir
	if f.Kind == "character" {
		dir = memgraph.CharacterDir
	}
	base := memgraph.Slug(cmp.Or(f.Slug, f.Description))
	slug, err := memgraph.UniqueSlug(base, func(slug string) bool {
		rel := dir + "/" + slug + ".md"
		if out.files[rel] != nil || pending[rel] != nil || s.c.g.Get(rel) != nil {
			return true
		}
		if b, err := s.d.read(s.c.r, rel); b != nil || err != nil {
			return true // at the dream's tip
		}
		_, err := s.c.r.Tree().Lstat(dir + "/" + slug + ".md")
		return !errors.Is(err, fs.ErrNotExist) // on the live branch since
	})
	if err != nil {
		return "", err
	}
	rel := dir + "/" + slug + ".md"
	episode := f.Episode
	if strings.TrimSpace(episode) == "" {
		episode = fmt.Sprintf("Consolidated from %s on %s.", s.src, s.now.Format(memgraph.DateLayout))
	}
	m := memgraph.NewMemory(rel, titleOf(slug), cmp.Or(desc, f.Description), cmp.Or(text, f.Fact), episode, s.now)
	m.SetSource(s.memorySource())
	if f.Topic != "" {
		m.SetTopic(f.Topic)
	}
	m.SetKeywords(f.Keywords)
	if len(f.Tags) > 0 {
		m.SetTags(f.Tags)
	}
	if f.Pinned {
		m.SetPinned(true)
	}
	s.snap[rel] = nil // new: must still be absent on disk at commit time
	pending[rel] = m
	return rel, nil
}

// titleOf turns a slug into a heading: "likes-coffee" -> "Likes Coffee".
func titleOf(slug string) string {
	words := strings.Split(slug, "-")
	for i, w := range words {
		if w != "" {
			words[i] = strings.ToUpper(w[:1]) + w[1:]
		}
	}
	return strings.Join(words, " ")
}

// validate asks the gate (tracker.Check, as a prepared change) about every
// planned file against its version at the dream's tip, and returns the
// first problem, or "". Consolidation writes the memory folders only.
func (s *chunkRun) validate(files map[string]*memgraph.Memory) string {
	rules := s.c.gateRules()
	for rel, m := range files {
		if !allowedMemoryPath(rel) {
			return fmt.Sprintf("%s is outside the memory folders", rel)
		}
		prev, err := s.headVersion(rel)
		if err != nil {
			return err.Error()
		}
		after := tracker.Version{Data: m.Render(), Exists: true}
		if probs := tracker.Check(rel, after, tracker.Version{Data: prev, Exists: prev != nil}, rules); len(probs) > 0 {
			return "the result would not be committed: " + redacted(probs[0].String())
		}
	}
	return ""
}

// headVersion returns the bytes of rel at the dream's tip (nil when new),
// cached for the run. A path the run creates did not exist there, and a
// new file never carries read_only, so the tip is not consulted for it.
func (s *chunkRun) headVersion(rel string) ([]byte, error) {
	if data, seen := s.snap[rel]; seen && data == nil {
		return nil, nil
	}
	if b, ok := s.head[rel]; ok {
		return b, nil
	}
	b, err := s.d.read(s.c.r, rel)
	if err != nil {
		return nil, err
	}
	s.head[rel] = b
	return b, nil
}
