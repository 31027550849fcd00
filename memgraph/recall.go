package memgraph

import (
	"context"
	"fmt"
	"path"
	"strings"

	"github.com/mindmount/mindmount/memgraph/recall"
)

// VectorCacheDir is where recall caches embeddings, relative to the
// repository root. It is derived data, rebuilt on demand, and never
// committed (the cache writes its own .gitignore).
const VectorCacheDir = StateDir + "/cache/vectors"

// newRecallIndex is a graph's recall index: questions are expanded
// through WordNet when it is installed (recall.DefaultExpander), which
// measured a little better on the LoCoMo benchmark and no worse on the
// golden set; without it, keyword recall as it always was.
func newRecallIndex() *recall.Index {
	ix := recall.New()
	ix.SetExpander(recall.DefaultExpander())
	return ix
}

// RecallIndex returns the graph's recall index, kept current by the
// graph's change events. The first call builds it (or waits for the build
// WarmRecall started): Scan does not, so that loading a repository costs
// what reading it costs, and a command that never recalls never builds it.
func (g *Graph) RecallIndex() *recall.Index {
	g.buildRecall(false)
	return g.recall
}

// RecallBuilt reports whether the recall index is built (the first
// recall will not wait for it).
func (g *Graph) RecallBuilt() bool { return g.rbuilt.Load() }

// WarmRecall starts building the recall index in the background, for a
// server that will recall soon: the build overlaps the rest of its start
// (recovery, watches) instead of following the scan. RecallIndex waits for
// it; Close stops it.
func (g *Graph) WarmRecall() {
	if !g.rbuilt.Load() {
		go g.buildRecall(true)
	}
}

// buildRecall indexes every valid memory once. It holds rmu throughout,
// and every change takes rmu to update the index, so a change is either
// in the graph before the build reads it or applied to the index after
// the build: none is lost, whatever the interleaving (recall_lazy_test.go).
// A background build (stoppable) ends early once Close is called; what it
// put is replaced by the next build. With a saved index (SetRecallFile)
// it loads that and re-indexes only the memories that changed since, then
// saves the result when anything did.
func (g *Graph) buildRecall(stoppable bool) {
	if g.rbuilt.Load() {
		return
	}
	if save := g.buildRecallLocked(stoppable); save != nil {
		save()
	}
}

func (g *Graph) buildRecallLocked(stoppable bool) (save func()) {
	g.rmu.Lock()
	defer g.rmu.Unlock()
	if g.rbuilt.Load() {
		return nil
	}
	g.mu.RLock()
	docs := make([]recall.Doc, 0, len(g.files))
	for _, e := range g.files {
		if e.valid != nil && recalled(e.valid.m) {
			docs = append(docs, RecallDoc(e.valid.m))
		}
	}
	g.mu.RUnlock()
	afterRecallSnapshot()
	key := recall.CurrentKey()
	if g.rfile != "" && g.recall.LoadFile(g.rfile, key) == nil {
		if g.recall.Reconcile(docs) == 0 {
			g.rbuilt.Store(true)
			return nil
		}
	} else {
		for _, d := range docs {
			if stoppable && g.rclosed.Load() {
				return nil // not built: a later RecallIndex builds it whole
			}
			g.recall.Put(d)
		}
	}
	g.rbuilt.Store(true)
	if g.rfile == "" {
		return nil
	}
	data, path := g.recall.Marshal(key), g.rfile
	// Written after rmu is released: changes do not wait for the disk.
	// A failure only costs the next start a build.
	return func() { recall.SaveFile(path, data) }
}

// SetRecallFile makes the recall index load from and save to path (a
// private file of the repository's git directory, never committed: it
// holds what the memories say, tokenized). Call it before the index is
// built; "" turns it off.
func (g *Graph) SetRecallFile(path string) {
	g.rmu.Lock()
	g.rfile = path
	g.rmu.Unlock()
}

// afterRecallSnapshot is called by a build once it has read the graph; a
// test makes changes there, while the build goes on.
var afterRecallSnapshot = func() {}

// Close stops a background recall build in progress and the recall
// index's background embedding, if any. Recall still answers afterwards.
func (g *Graph) Close() {
	g.rclosed.Store(true)
	g.rmu.Lock() // waits for a build to notice
	g.rmu.Unlock()
	g.recall.Close()
}

// Recall ranks the graph's memories for the question q: active memories
// only unless opt.All, best first.
func (g *Graph) Recall(q string, opt recall.Options) []recall.Hit {
	return g.RecallIndex().Search(q, opt)
}

// RecallMarkdown renders a recall ranking as the text of
// .mindmount/search/<q>: a heading with the question, then one numbered item
// per memory, best first, with its repo-relative path, lifecycle status
// when retired, description and score, and the best-matching sentence when
// it says more than the description. Paths are plain text, not links: the
// file is read from .mindmount/search/, where relative links would point
// nowhere. Every piece of text goes through SafeLine.
func RecallMarkdown(q string, hits []recall.Hit) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "# Recall: %s\n\n", SafeLine(q))
	if len(hits) == 0 {
		b.WriteString("No memory matches.\n")
		return []byte(b.String())
	}
	for i, h := range hits {
		desc := SafeLine(h.Description)
		fmt.Fprintf(&b, "%d. %s%s — %s (score %.3f)\n", i+1, SafeLine(h.Path), RetiredTag(h.Status), desc, h.Score)
		if s := SafeLine(h.Snippet); s != "" && s != desc {
			fmt.Fprintf(&b, "   > %s\n", s)
		}
	}
	return []byte(b.String())
}

// RetiredTag is how a recall hit shows a lifecycle status other than
// active: " [superseded]"; "" for an active memory.
func RetiredTag(status string) string {
	if status == "" || status == string(StatusActive) {
		return ""
	}
	return " [" + SafeLine(status) + "]"
}

// RecallLines renders a recall ranking for a model's prompt (the prompt
// hook of an agent harness, the chat proxy's system prompt): one
// "- path: description — sentence" line per memory, best first, the
// sentence only when it says more than the description. Every piece of
// text goes through SafeLine, so a hit is one line of the prompt.
func RecallLines(hits []recall.Hit) string {
	var b strings.Builder
	for _, h := range hits {
		desc := SafeLine(h.Description)
		fmt.Fprintf(&b, "- %s: %s", SafeLine(h.Path), desc)
		if s := SafeLine(h.Snippet); s != "" && s != desc {
			fmt.Fprintf(&b, " — %s", s)
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// RecallContext is Recall with a context for the query embedding, when
// vectors are configured.
func (g *Graph) RecallContext(ctx context.Context, q string, opt recall.Options) []recall.Hit {
	return g.RecallIndex().SearchContext(ctx, q, opt)
}

// SetEmbedder turns on vector recall: memories are embedded in the
// background (never blocking writes) and cached in cacheDir, "" meaning
// <root>/.mindmount/cache/vectors. The model name, part of the cache key, is
// taken from e's Model method when it has one.
func (g *Graph) SetEmbedder(e recall.Embedder, cacheDir string) error {
	if cacheDir == "" {
		cacheDir = g.Root() + "/" + VectorCacheDir
	}
	return g.RecallIndex().SetVectors(recall.NewVectors(e, ModelName(e), cacheDir), true)
}

// ModelName is the embedding model of e when e says (consolidate's
// providers have a Model method), else "default".
func ModelName(e recall.Embedder) string {
	if m, ok := e.(interface{ Model() string }); ok && m.Model() != "" {
		return m.Model()
	}
	return "default"
}

// RecallDoc converts a memory into what recall indexes.
func RecallDoc(m *Memory) recall.Doc {
	st := string(m.Front.Status)
	if st == "" {
		st = string(StatusActive)
	}
	return recall.Doc{
		Path:        m.Path,
		Kind:        string(KindOf(m.Path)),
		Title:       m.Title,
		Description: m.Front.Description,
		Fact:        m.Fact,
		Episode:     m.Episode,
		Keywords:    recallKeywords(m),
		Active:      m.Active(),
		Status:      st,
		Uses:        m.Uses,
	}
}

// recallKeywords are the words of a memory recall finds beside its text:
// its topic ("home-city"), its file name's words ("has-dog-pixel"), its
// tags and its keywords, so that "job" finds a memory of topic job whose
// text says "works as a nurse".
func recallKeywords(m *Memory) string {
	words := []string{m.Front.Topic, strings.TrimSuffix(path.Base(m.Path), ".md")}
	words = append(words, m.Front.Tags...)
	words = append(words, m.Front.Keywords...)
	return strings.ReplaceAll(strings.Join(words, " "), "-", " ")
}

// recalled says whether recall indexes m. Blocks (character.md, user.md,
// system/) are always in the context, so recalling them would add nothing.
func recalled(m *Memory) bool { return KindOf(m.Path) != KindBlock }

// recallPut indexes the new valid version of a memory, once the index is
// built (until then the build reads it from the graph).
func (g *Graph) recallPut(m *Memory) {
	if !recalled(m) {
		return
	}
	g.rmu.Lock()
	defer g.rmu.Unlock()
	if g.rbuilt.Load() {
		g.recall.Put(RecallDoc(m))
	}
}

// recallDelete forgets a memory that is gone.
func (g *Graph) recallDelete(rel string) {
	g.rmu.Lock()
	defer g.rmu.Unlock()
	if g.rbuilt.Load() {
		g.recall.Delete(rel)
	}
}
