package consolidate

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/engram-dev/engram/memgraph"
	"github.com/engram-dev/engram/memgraph/gitrepo"
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

// outcome is a planned set of file contents plus counts.
type outcome struct {
	files    map[string]*memgraph.Memory // rel -> new content
	touched  map[string][]int            // existing rel -> facts that change it
	created  map[string][]int            // new rel -> facts that create it
	problems []string

	added, updated, contradicted, unchanged, skipped int
}

func newOutcome() *outcome {
	return &outcome{files: map[string]*memgraph.Memory{}, touched: map[string][]int{}, created: map[string][]int{}}
}

// plan applies the decisions to the snapshot, in memory. A decision that
// names a path outside the memory folders, a target that is no candidate,
// or produces an invalid file is skipped and reported.
func (s *chunkRun) plan(facts []Fact, cands [][]candidate, decs []*Decision) *outcome {
	out := newOutcome()
	allowed := map[string]bool{}
	for _, cs := range cands {
		for _, c := range cs {
			allowed[c.Path] = true
		}
	}
	stamped := map[string]bool{}
	for i, f := range facts {
		d := decs[i]
		if d == nil {
			out.skipped++
			out.problems = append(out.problems, fmt.Sprintf("fact %d (%q): the model gave no decision", i, f.Description))
			continue
		}
		// Work on copies; they replace out.files only if all are valid.
		pending := map[string]*memgraph.Memory{}
		get := func(rel string) *memgraph.Memory {
			if m := pending[rel]; m != nil {
				return m
			}
			if m := out.files[rel]; m != nil {
				pending[rel] = m.Clone()
				return pending[rel]
			}
			if m := s.load(rel); m != nil {
				pending[rel] = m
				return m
			}
			return nil
		}
		var target string
		if d.Action != ActionAdd {
			rel, err := targetPath(d.Target)
			switch {
			case err != nil:
				out.skip(i, d, err.Error())
				continue
			case !allowed[rel]:
				out.skip(i, d, fmt.Sprintf("target %q is not one of the candidates shown to the model", d.Target))
				continue
			}
			m := get(rel)
			if m == nil || s.c.g.ReadOnly(rel) || m.Front.ReadOnly {
				out.skip(i, d, fmt.Sprintf("target %q does not exist, is invalid or is read_only", d.Target))
				continue
			}
			if !m.Active() && d.Action != ActionNone {
				out.skip(i, d, fmt.Sprintf("target %q is no longer active", d.Target))
				continue
			}
			target = rel
		}
		var created string
		switch d.Action {
		case ActionAdd:
			created = s.newMemory(f, "", "", out, pending)
			out.added++
		case ActionUpdate:
			m := get(target)
			if d.Description != "" {
				m.SetDescription(d.Description)
			}
			m.SetFact(firstNonEmpty(d.Text, f.Fact))
			if ep := strings.TrimSpace(f.Episode); ep != "" && !strings.Contains(m.Episode, ep) {
				m.SetEpisode(strings.TrimSpace(m.Episode + "\n" + ep))
			}
			out.updated++
		case ActionDelete:
			// A contradiction never loses the new fact: it is added, and
			// the old memory is retired and linked to it.
			created = s.newMemory(f, d.Description, d.Text, out, pending)
			pending[created].SetSupersedes(targetName(target))
			get(target).SetStatus(memgraph.StatusContradicted, targetName(created))
			out.contradicted++
		case ActionNone:
			if !stamped[target] {
				get(target).AddUse(s.now)
				stamped[target] = true
			}
			out.unchanged++
		}
		if bad := s.validate(pending); bad != "" {
			out.undo(d.Action)
			out.skip(i, d, bad)
			continue
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
	// NONE stamps that did not change anything are not files to write.
	for rel, m := range out.files {
		if old, ok := s.snap[rel]; ok && bytes.Equal(old, m.Render()) {
			delete(out.files, rel)
		}
	}
	return out
}

func (o *outcome) skip(i int, d *Decision, why string) {
	o.skipped++
	o.problems = append(o.problems, fmt.Sprintf("fact %d %s: %s", i, d.Action, why))
}

func (o *outcome) undo(a Action) {
	switch a {
	case ActionAdd:
		o.added--
	case ActionUpdate:
		o.updated--
	case ActionDelete:
		o.contradicted--
	case ActionNone:
		o.unchanged--
	}
}

// targetPath turns a model-supplied target into a repo path, refusing
// anything that is not a memory file directly in the memory folders.
func targetPath(t string) (string, error) {
	t = strings.TrimPrefix(strings.TrimSpace(t), "./")
	rel := strings.TrimSuffix(t, ".md") + ".md"
	if strings.HasPrefix(t, "/") || strings.Contains(t, "\\") || path.Clean(rel) != rel || !allowedMemoryPath(rel) {
		return "", fmt.Errorf("target %q is not a memory in user_memory/ or character_memory/", truncateRunes(t, 80))
	}
	return rel, nil
}

// newMemory plans a new memory file for f and returns its path.
func (s *chunkRun) newMemory(f Fact, desc, text string, out *outcome, pending map[string]*memgraph.Memory) string {
	dir := memgraph.UserDir
	if f.Kind == "character" {
		dir = memgraph.CharacterDir
	}
	base := memgraph.Slug(firstNonEmpty(f.Slug, f.Description))
	slug := memgraph.UniqueSlug(base, func(slug string) bool {
		rel := dir + "/" + slug + ".md"
		if out.files[rel] != nil || pending[rel] != nil || s.c.g.Get(rel) != nil {
			return true
		}
		_, err := os.Lstat(filepath.Join(s.c.r.Dir(), dir, slug+".md"))
		return !errors.Is(err, fs.ErrNotExist)
	})
	rel := dir + "/" + slug + ".md"
	episode := f.Episode
	if strings.TrimSpace(episode) == "" {
		episode = fmt.Sprintf("Consolidated from %s on %s.", s.src, s.now.Format(memgraph.DateLayout))
	}
	m := memgraph.NewMemory(rel, titleOf(slug), firstNonEmpty(desc, f.Description), firstNonEmpty(text, f.Fact), episode, s.now)
	m.SetSource("consolidate " + s.src)
	s.snap[rel] = nil // new: must still be absent on disk at commit time
	pending[rel] = m
	return rel
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

// validate checks every planned file with memgraph.Validate against its
// last committed version (which enforces the read_only rule) and returns
// the first problem, or "".
func (s *chunkRun) validate(files map[string]*memgraph.Memory) string {
	for rel, m := range files {
		if !allowedMemoryPath(rel) {
			return fmt.Sprintf("%s is outside the memory folders", rel)
		}
		if m.Front.ReadOnly {
			return fmt.Sprintf("%s would be read_only", rel)
		}
		prev, err := s.headVersion(rel)
		if err != nil {
			return err.Error()
		}
		if probs := memgraph.Validate(rel, m.Render(), prev); len(probs) > 0 {
			return "the result would be invalid: " + probs[0].String()
		}
	}
	return ""
}

// headVersion returns the last committed bytes of rel (nil when new),
// cached for the run. A path the run creates did not exist on disk, and a
// new file never carries read_only, so HEAD is not consulted for it.
func (s *chunkRun) headVersion(rel string) ([]byte, error) {
	if data, seen := s.snap[rel]; seen && data == nil {
		return nil, nil
	}
	if b, ok := s.head[rel]; ok {
		return b, nil
	}
	b, ok, err := s.c.r.ReadHead(rel)
	if err != nil {
		return nil, err
	}
	if !ok {
		b = nil
	}
	s.head[rel] = b
	return b, nil
}

// conflicts re-reads every existing file the plan changes and every path it
// creates; files that differ from the snapshot are dropped from it (so the
// next load sees the new content) and the facts involved are returned.
func (s *chunkRun) conflicts(out *outcome) []int {
	redo := map[int]bool{}
	check := func(rel string, facts []int) {
		now, err := os.ReadFile(filepath.Join(s.c.r.Dir(), filepath.FromSlash(rel)))
		if err != nil {
			now = nil
		}
		if !bytes.Equal(now, s.snap[rel]) || (now == nil) != (s.snap[rel] == nil) {
			delete(s.snap, rel)
			for _, i := range facts {
				redo[i] = true
			}
		}
	}
	for rel, facts := range out.touched {
		check(rel, facts)
	}
	for rel, facts := range out.created {
		check(rel, facts)
	}
	var list []int
	for i := range redo {
		list = append(list, i)
	}
	sort.Ints(list)
	return list
}

// commit writes the planned files and the cursor in one gitrepo.Apply, then
// tells the graph.
func (s *chunkRun) commit(out *outcome, next *Cursor) (string, error) {
	rels := make([]string, 0, len(out.files))
	for rel := range out.files {
		rels = append(rels, rel)
	}
	sort.Strings(rels)
	subject := fmt.Sprintf("consolidate %s: %s", s.src, counts(out.added, out.updated, out.contradicted, out.unchanged, out.skipped))
	next.Last = &LastRun{Message: s.message(subject, rels, out), Files: rels}
	changes := make([]gitrepo.Change, 0, len(rels)+1)
	for _, rel := range rels {
		changes = append(changes, gitrepo.Change{Path: rel, Data: out.files[rel].Render()})
	}
	// The cursor goes last: Apply writes in order, so a work tree cursor
	// ahead of HEAD means every memory file of the run is on disk.
	changes = append(changes, gitrepo.Change{Path: CursorFile, Data: next.Render()})
	hash, err := s.c.r.Apply(changes, next.Last.Message, Author, s.now)
	if err != nil {
		return "", fmt.Errorf("committing %s: %w", s.src, err)
	}
	for _, ch := range changes[:len(changes)-1] {
		s.c.g.Put(ch.Path, ch.Data)
	}
	return hash, nil
}

// message is the commit message: the subject, the files, what was skipped,
// and trailers naming the model and the source range.
func (s *chunkRun) message(subject string, rels []string, out *outcome) string {
	var b strings.Builder
	b.WriteString(subject + "\n\n")
	for _, rel := range rels {
		b.WriteString("  " + rel + "\n")
	}
	if len(out.problems) > 0 {
		b.WriteString("\nskipped:\n")
		for _, p := range out.problems {
			b.WriteString("  " + oneLineText(p, 200) + "\n")
		}
	}
	if len(rels) > 0 || len(out.problems) > 0 {
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "Engram-Model: %s/%s\nEngram-Source: %s\n", s.c.p.Name(), s.c.p.Model(), s.src)
	return b.String()
}
