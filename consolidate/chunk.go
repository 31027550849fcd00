package consolidate

import (
	"context"
	"fmt"
	"runtime"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/mindmount/mindmount/consolidate/llm"
	"github.com/mindmount/mindmount/fs/gitrepo"
	"github.com/mindmount/mindmount/memgraph"
	"github.com/mindmount/mindmount/memgraph/recall"
	"github.com/mindmount/mindmount/memgraph/secret"
)

// chunkRun is the state of consolidating one chunk: the snapshot of every
// existing memory it read (bytes at the dream's tip when the model was
// shown them), which is what decisions are applied to. Edits made meanwhile
// on the live branch meet the dream's changes in its merge (dream.go).
type chunkRun struct {
	c    *Consolidator
	d    *dream
	src  string
	now  time.Time
	snap map[string][]byte // rel -> bytes read; nil value: read and absent
	head map[string][]byte // rel -> bytes at the dream's tip (cache)
	prov string            // Mindmount-Transcript trailer: path, lines, content hash
	// origin is the transcript's Provenance, nil for a conversation.
	origin *Provenance

	topics     map[string][]string // kind+topic -> active memories (built on first use)
	redactions int                 // secrets removed from the model's answers
}

// runChunk extracts, decides, applies and commits one chunk of messages
// together with the cursor advance next.
func (c *Consolidator) runChunk(ctx context.Context, t *Transcript, ch chunk, next *Cursor, rep *Report, d *dream) error {
	s := &chunkRun{c: c, d: d, src: source(t.Path, ch.lo, ch.hi), now: c.cfg.Now(), snap: map[string][]byte{}, head: map[string][]byte{},
		prov: t.Provenance(ch.lo, ch.hi)}
	if p, ok := c.provenance(t.Path); ok {
		s.src, s.origin = p.Source, &p
	}
	facts, skills, err := s.extract(ctx, renderMessages(t, ch.lo, ch.hi), rep)
	if err != nil {
		return err
	}
	var out *outcome
	if len(facts) > 0 {
		if out, err = s.decideAndPlan(ctx, facts); err != nil {
			return err
		}
	} else {
		out = newOutcome()
	}
	s.planSkills(skills, out)
	for _, p := range out.problems {
		c.log.Warn("consolidation skipped a decision", "source", s.src, "problem", p)
		rep.problem("%s: %s", s.src, p)
	}
	hash, err := s.commit(out, next)
	if err != nil {
		return err
	}
	rep.Commits = append(rep.Commits, hash)
	c.propose(rep, out.proposals)
	rep.Sources = append(rep.Sources, s.src)
	for rel := range out.skills {
		if memgraph.IsSkillFile(rel) {
			rep.Skills = append(rep.Skills, rel)
		}
	}
	rep.Messages += ch.hi - ch.lo
	rep.Added += out.added
	rep.Updated += out.updated
	rep.Contradicted += out.contradicted
	rep.Unchanged += out.unchanged
	rep.Skipped += out.skipped
	rep.Redactions += s.redactions
	c.log.Info("consolidated", "source", s.src, "commit", gitrepo.ShortHash(hash),
		"outcome", counts(out.added, out.updated, out.contradicted, out.unchanged, out.skipped))
	return nil
}

// extract redacts secrets, then asks the model for facts, in parts when
// the text exceeds the budget (one huge message). What the model returns
// is redacted too: it never saw a secret, but it must not invent one.
func (s *chunkRun) extract(ctx context.Context, text string, rep *Report) ([]Fact, []SkillDraft, error) {
	clean, found := secret.Redact(text)
	if len(found) > 0 {
		rep.Redactions += len(found)
		s.c.log.Info("redacted secrets before sending the transcript to the model", "source", s.src, "removed", secret.Count(found))
	}
	if strings.TrimSpace(clean) == "" {
		return nil, nil, nil
	}
	parts := splitText(clean, s.c.cfg.ChunkChars)
	known := s.knownSkills()
	var facts []Fact
	var skills []SkillDraft
	for i, part := range parts {
		req := llm.ChatRequest{System: extractSystemFor(s.origin != nil), Prompt: extractPrompt(s.src, s.now, part, i+1, len(parts)) + known,
			SchemaName: SchemaExtract, Schema: extractSchema}
		parse := ParseFacts
		if s.origin != nil {
			req.Schema, parse = batchExtractSchema(), ParseBatchFacts
		}
		ans, err := s.c.p.Chat(ctx, req)
		if err != nil {
			return nil, nil, fmt.Errorf("extracting facts from %s: %w", s.src, err)
		}
		fs, probs, err := parse(ans)
		if err != nil {
			return nil, nil, fmt.Errorf("extracting facts from %s: unusable answer from %s/%s: %s", s.src, s.c.p.Name(), s.c.p.Model(), redacted(err.Error()))
		}
		sks, sprobs := ParseSkills(ans)
		skills = append(skills, sks...)
		for _, p := range append(probs, sprobs...) {
			p = redacted(p)
			rep.problem("%s: %s", s.src, p)
			s.c.log.Warn("model output refused", "source", s.src, "problem", p)
		}
		facts = append(facts, fs...)
	}
	var r redactor
	for i := range facts {
		r.fact(&facts[i])
	}
	for i := range skills {
		r.skill(&skills[i])
	}
	s.redactions += r.n
	return facts, skills, nil
}

// load returns the memory at rel as the run sees it: the bytes read the
// first time (the snapshot), parsed. nil when absent or invalid.
func (s *chunkRun) load(rel string) *memgraph.Memory {
	data, seen := s.snap[rel]
	if !seen {
		b, err := s.d.read(s.c.r, rel)
		if err == nil {
			data = b
		}
		s.snap[rel] = data
	}
	if data == nil {
		return nil
	}
	m, probs := memgraph.Parse(rel, data)
	if len(probs) > 0 || m == nil {
		return nil
	}
	return m
}

// candidates finds the existing memories a fact may touch: the union of
// recall over its description, text and search terms, and every active
// memory of the same kind with the same topic (most used first), so that
// "moved to Lisbon" meets "lives in Porto" although they share no word.
// Read_only, invalid and inactive memories and anything outside the
// memory folders are never offered. Each candidate says why it was.
func (s *chunkRun) candidates(ctx context.Context, f Fact) []candidate {
	return s.candidatesFrom(f, s.searchFor(ctx, f))
}

// candidatesAll is candidates for every fact, with the recall searches
// (the costly part, an embedding call each when vectors are on) run in
// parallel; the snapshot reads that follow stay on this goroutine.
func (s *chunkRun) candidatesAll(ctx context.Context, facts []Fact) [][]candidate {
	hits := make([][]recall.Hit, len(facts))
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(facts)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				hits[i] = s.searchFor(ctx, facts[i])
			}
		}()
	}
	for i := range facts {
		next <- i
	}
	close(next)
	wg.Wait()
	out := make([][]candidate, len(facts))
	for i, f := range facts {
		out[i] = s.candidatesFrom(f, hits[i])
	}
	return out
}

// searchFor runs the recall search candidates offers from: the fact's
// description, text and search terms, over the memories the dream's
// earlier chunks wrote (first: they are this conversation's, and the live
// graph does not hold them yet) and over the live graph.
func (s *chunkRun) searchFor(ctx context.Context, f Fact) []recall.Hit {
	q := f.Description + "\n" + f.Fact
	if len(f.Search) > 0 {
		q += "\n" + strings.Join(f.Search, "\n")
	}
	hits := s.c.g.RecallContext(ctx, q, recall.Options{K: s.c.cfg.Candidates * 3})
	if len(s.c.cfg.Scopes) > 0 {
		hits = memgraph.RecallAcross(ctx, s.c.g, true, s.c.cfg.Scopes, q, recall.Options{K: s.c.cfg.Candidates * 3})
	}
	if s.d.own != nil {
		hits = append(s.d.own.Search(q, recall.Options{K: s.c.cfg.Candidates}), hits...)
	}
	return hits
}

// candidatesFrom is candidates given the fact's search hits.
func (s *chunkRun) candidatesFrom(f Fact, hits []recall.Hit) []candidate {
	want := s.c.cfg.Candidates
	var out []candidate
	at := map[string]int{} // path -> index in out
	offer := func(rel, why string) bool {
		if i, ok := at[rel]; ok {
			if !strings.Contains(out[i].Why, why) {
				out[i].Why += ", " + why
			}
			return true
		}
		if m := s.teamMemory(rel); m != nil {
			at[rel] = len(out)
			out = append(out, candidate{Path: rel, Mem: m, Why: why})
			return true
		}
		if !allowedMemoryPath(rel) || s.c.g.ReadOnly(rel) {
			return false
		}
		m := s.load(rel)
		if m == nil || !m.Active() || m.Front.ReadOnly {
			return false
		}
		at[rel] = len(out)
		out = append(out, candidate{Path: rel, Mem: m, Why: why, Sibling: s.sibling(m)})
		return true
	}
	if f.Topic != "" {
		n := 0
		for _, rel := range s.sameTopic(f.Kind, f.Topic) {
			if n == s.c.cfg.TopicCandidates {
				break
			}
			if offer(rel, whyTopic+" "+f.Topic) {
				n++
			}
		}
	}
	n := 0
	for _, h := range hits {
		if n == want {
			break
		}
		if _, dup := at[h.Path]; dup {
			offer(h.Path, whySearch)
			n++
			continue
		}
		if offer(h.Path, whySearch) {
			n++
		}
	}
	return out
}

// Why a candidate was offered, as the decision prompt shows it.
const (
	whyTopic  = "same topic"
	whySearch = "search match"
)

// sameTopic lists the active memories of kind (folder) with topic: those
// the dream's earlier chunks wrote, then the live graph's, most used
// first, from an index built once per chunk.
func (s *chunkRun) sameTopic(kind, topic string) []string {
	if s.topics == nil {
		s.topics = topicIndex(s.c.g)
	}
	var out []string
	for rel, m := range s.d.mems {
		if string(memgraph.KindOf(rel)) == kind && m.Front.Topic == topic && m.Active() {
			out = append(out, rel)
		}
	}
	sort.Strings(out)
	for _, rel := range s.topics[kind+"\x00"+topic] {
		if s.d.mems[rel] == nil { // the dream's version counts, above
			out = append(out, rel)
		}
	}
	return out
}

// topicIndex maps "kind\x00topic" to the active memories carrying it,
// most used first, then by path.
func topicIndex(g *memgraph.Graph) map[string][]string {
	idx := map[string][]string{}
	uses := map[string]int{}
	for _, kind := range []memgraph.Kind{memgraph.KindUser, memgraph.KindCharacter} {
		for _, m := range g.Memories(kind) {
			if m.Front.Topic == "" || !m.Active() {
				continue
			}
			k := string(kind) + "\x00" + m.Front.Topic
			idx[k] = append(idx[k], m.Path)
			uses[m.Path] = m.Uses
		}
	}
	for _, paths := range idx {
		sort.SliceStable(paths, func(i, j int) bool {
			if uses[paths[i]] != uses[paths[j]] {
				return uses[paths[i]] > uses[paths[j]]
			}
			return paths[i] < paths[j]
		})
	}
	return idx
}

// decide asks for one decision per fact; the result is indexed by fact.
func (s *chunkRun) decide(ctx context.Context, facts []Fact, cands [][]candidate) ([]*Decision, []string, error) {
	ans, err := s.c.p.Chat(ctx, llm.ChatRequest{System: decideSystemFor(s.origin != nil), Prompt: decidePrompt(facts, cands),
		SchemaName: SchemaDecide, Schema: decideSchema})
	if err != nil {
		return nil, nil, fmt.Errorf("deciding on the facts of %s: %w", s.src, err)
	}
	ds, probs, err := ParseDecisions(ans, len(facts))
	if err != nil {
		return nil, nil, fmt.Errorf("deciding on the facts of %s: unusable answer from %s/%s: %s", s.src, s.c.p.Name(), s.c.p.Model(), redacted(err.Error()))
	}
	var r redactor
	out := make([]*Decision, len(facts))
	for i := range ds {
		r.decision(&ds[i])
		out[ds[i].Fact] = &ds[i]
	}
	s.redactions += r.n
	for i := range probs {
		probs[i] = redacted(probs[i])
	}
	return out, probs, nil
}

// decideAndPlan runs the decision call in batches of MaxFacts and plans the
// changes against the snapshot.
func (s *chunkRun) decideAndPlan(ctx context.Context, facts []Fact) (*outcome, error) {
	cands := s.candidatesAll(ctx, facts)
	decs := make([]*Decision, len(facts))
	var probs []string
	for lo := 0; lo < len(facts); lo += MaxFacts {
		hi := min(lo+MaxFacts, len(facts))
		ds, p, err := s.decide(ctx, facts[lo:hi], cands[lo:hi])
		if err != nil {
			return nil, err
		}
		copy(decs[lo:hi], ds)
		probs = append(probs, p...)
	}
	out := s.plan(facts, cands, decs)
	out.problems = append(append([]string(nil), probs...), out.problems...)
	return out, nil
}
