package recall

import (
	"context"
	"math"
	"slices"
	"sort"
)

// BM25F parameters. Title and description are short and written to
// summarise the memory, so a match there says more than one in the fact;
// the episode is context about when it was learnt and counts least.
// Keywords (topic, file name, tags, extraction's search terms) say what
// the memory is about as a summary does, a little less surely.
var (
	fieldWeight = [numFields]float64{fTitle: 2.5, fDesc: 2.5, fFact: 1.5, fEpisode: 0.5, fKeys: 2.0}
	fieldB      = [numFields]float64{fTitle: 0.3, fDesc: 0.5, fFact: 0.75, fEpisode: 0.75, fKeys: 0.3}
)

const (
	k1 = 1.2
	// variantWeight scales a match on a morphological variant rather than
	// the query's own stem: good evidence, but weaker than the exact stem.
	variantWeight = 0.6
	// usePrior is the strength of the use-count prior: a memory used 20
	// times gains about 15%, enough to break near-ties, never enough to
	// lift a memory that does not match.
	usePrior = 0.05
	// nameWeight is the gain of a memory whose title holds a name the
	// question says: a factor 1.5, so the memory about Caroline outranks
	// the one that only addresses her, and a name alone never lifts a
	// memory that matches nothing else much.
	nameWeight = 0.5
	defaultK   = 10
)

// scratch holds per-search buffers, pooled to keep searches allocation-light.
type scratch struct {
	acc     []float64 // total score per doc id
	best    []float64 // best expansion score of the current query term
	touched []int32   // ids with best > 0 for the current term
	hit     []int32   // ids with acc > 0
}

func (ix *Index) getScratch(n int) *scratch {
	s, _ := ix.pool.Get().(*scratch)
	if s == nil {
		s = &scratch{}
	}
	if cap(s.acc) < n {
		s.acc = make([]float64, n)
		s.best = make([]float64, n)
	}
	s.acc = s.acc[:n]
	s.best = s.best[:n]
	s.touched = s.touched[:0]
	s.hit = s.hit[:0]
	return s
}

func (ix *Index) putScratch(s *scratch) {
	for _, id := range s.hit {
		s.acc[id] = 0
	}
	ix.pool.Put(s)
}

// Search ranks the documents for the query q. It is SearchContext with a
// background context.
func (ix *Index) Search(q string, opt Options) []Hit {
	return ix.SearchContext(context.Background(), q, opt)
}

// SearchContext ranks the documents for the query q, best first. With
// vectors configured, the query is embedded within a short timeout and the
// keyword and vector rankings are fused; any failure falls back to the
// keyword ranking.
func (ix *Index) SearchContext(ctx context.Context, q string, opt Options) []Hit {
	k := opt.K
	if k <= 0 {
		k = defaultK
	}
	// The query is expanded and embedded before taking the lock: reading
	// WordNet or a slow model must not hold up writers.
	var exp Expander
	if !opt.Literal {
		exp = ix.expanderOf()
	}
	qts := expandQuery(q, exp)
	terms := make([]string, len(qts))
	for i, t := range qts {
		terms[i] = t.term
	}
	var qvec []float32
	vi := ix.vectorsOf()
	if vi != nil && len(terms) > 0 && vi.v.Len() > 0 {
		qvec = vi.queryVector(ctx, q)
	}

	ix.mu.RLock()
	defer ix.mu.RUnlock()
	if qvec == nil {
		ranked := ix.keywordLocked(qts, opt, k)
		return ix.hitsLocked(ranked, terms, k)
	}
	depth := max(k, fusionDepth)
	kw := ix.keywordLocked(qts, opt, depth)
	vr := vi.rankLocked(ix, qvec, opt, depth)
	return ix.hitsLocked(ix.fuse(kw, vr), terms, k)
}

func (ix *Index) expanderOf() Expander {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	return ix.expander
}

// scored is a doc id with its score.
type scored struct {
	id    int32
	score float64
}

func (ix *Index) eligible(id int32, opt Options) bool {
	m := &ix.meta[id]
	return m.live && (opt.All || m.active) && (opt.Kind == "" || opt.Kind == m.kind)
}

// keywordLocked returns up to n eligible docs by BM25F score, best first.
func (ix *Index) keywordLocked(terms []queryTerm, opt Options, n int) []scored {
	if len(terms) == 0 || len(ix.byPath) == 0 {
		return nil
	}
	N := float64(len(ix.byPath))
	var avg [numFields]float64
	for f := range avg {
		avg[f] = float64(ix.sumLen[f]) / N
		if avg[f] <= 0 {
			avg[f] = 1
		}
	}
	s := ix.getScratch(len(ix.byID))
	defer ix.putScratch(s)

	for _, qt := range terms {
		ix.scoreTerm(s, qt.term, 1, N, &avg, opt)
		for _, v := range ix.variants(qt.term) {
			ix.scoreTerm(s, v, variantWeight, N, &avg, opt)
		}
		// A related word is evidence for the question's word, never more
		// specific than it: its idf is capped at the word's own, so a rare
		// hyponym cannot outweigh the word the question used.
		own := idf(N, max(0.5, float64(len(ix.postings[qt.term]))))
		for _, x := range qt.exp {
			ix.scoreTermIDF(s, x.term, x.w, N, own, &avg, opt)
		}
		// A query term contributes its best expansion once, so a document
		// with both "allergic" and "allergies", or "coffee" and "tea" for
		// "drink", does not count the idea twice.
		ix.mergeBest(s)
	}
	// A name the question says (a capitalised word inside it: "When did
	// Caroline…") that a memory's title holds says the memory is about
	// that person or thing, not one that merely mentions it.
	named := ix.namedLocked(terms)
	pinned := ix.feedbackPass(s, terms, opt, N, &avg, n, named)
	for id, k := range named {
		s.acc[id] *= math.Pow(1+nameWeight, float64(k))
	}

	// Keep the n best in a small sorted slice: most candidates of a common
	// term are rejected by one comparison, cheaper than sorting them all.
	out := make([]scored, 0, n+1)
	for _, id := range s.hit {
		if len(pinned) < n && !slices.ContainsFunc(pinned, func(p scored) bool { return p.id == id }) {
			out = ix.keepBest(out, scored{id, s.acc[id] * float64(ix.meta[id].prior)}, n-len(pinned))
		}
	}
	out = append(pinned, out...)
	return out
}

// namedLocked returns the docs whose title holds a name the question says,
// with how many of its names the title holds.
func (ix *Index) namedLocked(terms []queryTerm) map[int32]int {
	var out map[int32]int
	for _, qt := range terms {
		if !qt.name {
			continue
		}
		for _, p := range ix.postings[qt.term] {
			if p.tf[fTitle] > 0 {
				if out == nil {
					out = map[int32]int{}
				}
				out[p.doc]++
			}
		}
	}
	return out
}

// keepBest inserts c into out, a slice of at most n sorted best first, when
// it belongs there.
func (ix *Index) keepBest(out []scored, c scored, n int) []scored {
	if len(out) == n && !ix.better(c, out[n-1]) {
		return out
	}
	i := sort.Search(len(out), func(i int) bool { return ix.better(c, out[i]) })
	out = append(out, scored{})
	copy(out[i+1:], out[i:])
	out[i] = c
	if len(out) > n {
		out = out[:n]
	}
	return out
}

// better orders by score, then by path so equal scores rank stably.
func (ix *Index) better(a, b scored) bool {
	if a.score != b.score {
		return a.score > b.score
	}
	return ix.byID[a.id].doc.Path < ix.byID[b.id].doc.Path
}

// scoreTerm adds the BM25F score of term t (scaled by w) into s.best for
// every eligible doc holding it, keeping the best expansion per doc.
func (ix *Index) scoreTerm(s *scratch, t string, w, N float64, avg *[numFields]float64, opt Options) {
	ix.scoreTermIDF(s, t, w, N, math.Inf(1), avg, opt)
}

// idf is BM25's inverse document frequency of a term in df of N documents.
func idf(N, df float64) float64 { return math.Log(1 + (N-df+0.5)/(df+0.5)) }

// scoreTermIDF is scoreTerm with the term's idf capped at maxIDF.
func (ix *Index) scoreTermIDF(s *scratch, t string, w, N, maxIDF float64, avg *[numFields]float64, opt Options) {
	ps := ix.postings[t]
	if len(ps) == 0 {
		return
	}
	idf := min(idf(N, float64(len(ps))), maxIDF)
	for i := range ps {
		p := &ps[i]
		if !ix.eligible(p.doc, opt) {
			continue
		}
		lens := &ix.meta[p.doc].lens
		var tf float64
		for f := field(0); f < numFields; f++ {
			if p.tf[f] == 0 {
				continue
			}
			norm := 1 - fieldB[f] + fieldB[f]*float64(lens[f])/avg[f]
			tf += fieldWeight[f] * float64(p.tf[f]) / norm
		}
		sc := w * idf * tf / (k1 + tf)
		if cur := s.best[p.doc]; sc > cur {
			if cur == 0 {
				s.touched = append(s.touched, p.doc)
			}
			s.best[p.doc] = sc
		}
	}
}

func (ix *Index) hitsLocked(ranked []scored, terms []string, k int) []Hit {
	if len(ranked) > k {
		ranked = ranked[:k]
	}
	hits := make([]Hit, 0, len(ranked))
	for _, r := range ranked {
		d := ix.byID[r.id].doc
		hits = append(hits, Hit{
			Path:        d.Path,
			Kind:        d.Kind,
			Title:       d.Title,
			Description: d.Description,
			Snippet:     snippet(d, terms),
			Status:      d.Status,
			Score:       r.score,
		})
	}
	return hits
}
