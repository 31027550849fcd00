package memgraph

import (
	"context"

	"github.com/engram-dev/engram/memgraph/recall"
)

// VectorCacheDir is where recall caches embeddings, relative to the
// repository root. It is derived data, rebuilt on demand, and never
// committed (the cache writes its own .gitignore).
const VectorCacheDir = StateDir + "/cache/vectors"

// RecallIndex returns the graph's recall index, kept current by the
// graph's change events.
func (g *Graph) RecallIndex() *recall.Index { return g.recall }

// Close stops the recall index's background embedding, if any.
func (g *Graph) Close() { g.recall.Close() }

// Recall ranks the graph's memories for the question q: active memories
// only unless opt.All, best first.
func (g *Graph) Recall(q string, opt recall.Options) []recall.Hit {
	return g.RecallIndex().Search(q, opt)
}

// RecallContext is Recall with a context for the query embedding, when
// vectors are configured.
func (g *Graph) RecallContext(ctx context.Context, q string, opt recall.Options) []recall.Hit {
	return g.RecallIndex().SearchContext(ctx, q, opt)
}

// SetEmbedder turns on vector recall: memories are embedded in the
// background (never blocking writes) and cached in cacheDir, "" meaning
// <root>/.engram/cache/vectors. The model name, part of the cache key, is
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
		Active:      m.Active(),
		Status:      st,
		Uses:        m.Uses,
	}
}

// recallPut indexes the new valid version of a memory. Blocks
// (character.md, user.md, system/) are always in the context, so recalling
// them would add nothing.
func (g *Graph) recallPut(m *Memory) {
	if KindOf(m.Path) == KindBlock {
		return
	}
	g.RecallIndex().Put(RecallDoc(m))
}

// recallDelete forgets a memory that is gone.
func (g *Graph) recallDelete(rel string) {
	g.RecallIndex().Delete(rel)
}
