package consolidate

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/engram-dev/engram/memgraph"
	"github.com/engram-dev/engram/memgraph/recall"
)

// ErrConflict means memories kept changing under a run faster than it could
// re-decide; the chunk is retried later.
var ErrConflict = errors.New("memories changed during consolidation")

// chunkRun is the state of consolidating one chunk: the snapshot of every
// existing memory it read (bytes as on disk when the model was shown them),
// which is what decisions are applied to and what concurrent edits are
// detected against.
type chunkRun struct {
	c    *Consolidator
	src  string
	now  time.Time
	snap map[string][]byte // rel -> bytes read; nil value: read and absent
	head map[string][]byte // rel -> last committed bytes (cache)
}

// runChunk extracts, decides, applies and commits one chunk of messages
// together with the cursor advance next.
func (c *Consolidator) runChunk(ctx context.Context, t *Transcript, ch chunk, next *Cursor, rep *Report) error {
	s := &chunkRun{c: c, src: source(t.Path, ch.lo, ch.hi), now: c.cfg.Now(), snap: map[string][]byte{}, head: map[string][]byte{}}
	facts, err := s.extract(ctx, renderMessages(t, ch.lo, ch.hi), rep)
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
	for _, p := range out.problems {
		c.log.Warn("consolidation skipped a decision", "source", s.src, "problem", p)
		rep.problem("%s: %s", s.src, p)
	}
	hash, err := s.commit(out, next)
	if err != nil {
		return err
	}
	rep.Commits = append(rep.Commits, hash)
	rep.Sources = append(rep.Sources, s.src)
	rep.Messages += ch.hi - ch.lo
	rep.Added += out.added
	rep.Updated += out.updated
	rep.Contradicted += out.contradicted
	rep.Unchanged += out.unchanged
	rep.Skipped += out.skipped
	c.log.Info("consolidated", "source", s.src, "commit", short(hash),
		"outcome", counts(out.added, out.updated, out.contradicted, out.unchanged, out.skipped))
	return nil
}

func short(h string) string {
	if len(h) > 10 {
		return h[:10]
	}
	return h
}

// extract redacts secrets, then asks the model for facts, in parts when
// the text exceeds the budget (one huge message).
func (s *chunkRun) extract(ctx context.Context, text string, rep *Report) ([]Fact, error) {
	clean, found := Redact(text)
	if found != nil {
		n := 0
		for _, k := range found {
			n += k
		}
		rep.Redactions += n
		s.c.log.Info("redacted secrets before sending the transcript to the model", "source", s.src, "removed", describeRedactions(found))
	}
	if strings.TrimSpace(clean) == "" {
		return nil, nil
	}
	parts := splitText(clean, s.c.cfg.ChunkChars)
	var facts []Fact
	for i, part := range parts {
		ans, err := s.c.p.Chat(ctx, ChatRequest{System: extractSystem, Prompt: extractPrompt(s.src, s.now, part, i+1, len(parts)),
			SchemaName: SchemaExtract, Schema: extractSchema})
		if err != nil {
			return nil, fmt.Errorf("extracting facts from %s: %w", s.src, err)
		}
		fs, probs, err := ParseFacts(ans)
		if err != nil {
			return nil, fmt.Errorf("extracting facts from %s: unusable answer from %s/%s: %w", s.src, s.c.p.Name(), s.c.p.Model(), err)
		}
		for _, p := range probs {
			rep.problem("%s: %s", s.src, p)
			s.c.log.Warn("model output refused", "source", s.src, "problem", p)
		}
		facts = append(facts, fs...)
	}
	// The model never saw a secret, but it must not invent one either.
	for i := range facts {
		f := &facts[i]
		f.Slug, _ = Redact(f.Slug)
		f.Description, _ = Redact(f.Description)
		f.Fact, _ = Redact(f.Fact)
		f.Episode, _ = Redact(f.Episode)
	}
	return facts, nil
}

// load returns the memory at rel as the run sees it: the bytes read the
// first time (the snapshot), parsed. nil when absent or invalid.
func (s *chunkRun) load(rel string) *memgraph.Memory {
	data, seen := s.snap[rel]
	if !seen {
		b, err := os.ReadFile(filepath.Join(s.c.r.Dir(), filepath.FromSlash(rel)))
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

// candidates finds the existing active memories most related to f through
// the graph's recall, across both memory folders, skipping read_only
// files, invalid files and anything outside the memory folders.
func (s *chunkRun) candidates(ctx context.Context, f Fact) []candidate {
	want := s.c.cfg.Candidates
	hits := s.c.g.RecallContext(ctx, f.Description+"\n"+f.Fact, recall.Options{K: want * 3})
	var out []candidate
	for _, h := range hits {
		if len(out) == want {
			break
		}
		if !allowedMemoryPath(h.Path) || s.c.g.ReadOnly(h.Path) {
			continue
		}
		m := s.load(h.Path)
		if m == nil || !m.Active() || m.Front.ReadOnly {
			continue
		}
		out = append(out, candidate{Path: h.Path, Mem: m})
	}
	return out
}

// decide asks for one decision per fact; the result is indexed by fact.
func (s *chunkRun) decide(ctx context.Context, facts []Fact, cands [][]candidate) ([]*Decision, []string, error) {
	ans, err := s.c.p.Chat(ctx, ChatRequest{System: decideSystem, Prompt: decidePrompt(facts, cands),
		SchemaName: SchemaDecide, Schema: decideSchema})
	if err != nil {
		return nil, nil, fmt.Errorf("deciding on the facts of %s: %w", s.src, err)
	}
	ds, probs, err := ParseDecisions(ans, len(facts))
	if err != nil {
		return nil, nil, fmt.Errorf("deciding on the facts of %s: unusable answer from %s/%s: %w", s.src, s.c.p.Name(), s.c.p.Model(), err)
	}
	out := make([]*Decision, len(facts))
	for i := range ds {
		out[ds[i].Fact] = &ds[i]
	}
	return out, probs, nil
}

// decideAndPlan runs the decision call in batches of MaxFacts, plans the
// changes against the snapshot, and re-decides the facts whose files
// changed on disk meanwhile (bounded by cfg.Retries).
func (s *chunkRun) decideAndPlan(ctx context.Context, facts []Fact) (*outcome, error) {
	cands := make([][]candidate, len(facts))
	for i, f := range facts {
		cands[i] = s.candidates(ctx, f)
	}
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
	for attempt := 0; ; attempt++ {
		out := s.plan(facts, cands, decs)
		out.problems = append(append([]string(nil), probs...), out.problems...)
		redo := s.conflicts(out)
		if len(redo) == 0 {
			return out, nil
		}
		if attempt >= s.c.cfg.Retries {
			return nil, fmt.Errorf("%s: %w (%d attempts)", s.src, ErrConflict, attempt+1)
		}
		s.c.log.Info("memories changed during consolidation; deciding again", "source", s.src, "facts", len(redo))
		sub := make([]Fact, len(redo))
		subC := make([][]candidate, len(redo))
		for j, i := range redo {
			sub[j] = facts[i]
			cands[i] = s.candidates(ctx, facts[i])
			subC[j] = cands[i]
		}
		ds, _, err := s.decide(ctx, sub, subC)
		if err != nil {
			return nil, err
		}
		for j, i := range redo {
			decs[i] = ds[j]
		}
	}
}
