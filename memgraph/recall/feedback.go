package recall

import (
	"math"
	"slices"
)

// Pseudo-relevance feedback: a question whose answer is spread over
// several memories ("what activities has Melanie done with her family?")
// names the idea of the answer, and the first few memories it finds name
// its other words ("pottery", "camping", "museum"). A second pass asks for
// the words those memories share, weighted well below the question's own,
// so memories that hold the rest of the answer rise into the top ten while
// the first ranking's order is disturbed little.
var (
	// feedbackDocs is how many of the first pass's best memories seed the
	// second; 0 turns feedback off.
	feedbackDocs = 5
	// feedbackTerms is how many of their words the second pass asks for.
	feedbackTerms = 10
	// feedbackWeight scales the second pass against the first.
	feedbackWeight = 0.2
	// feedbackPin is how many of the first pass's best memories keep
	// their place: feedback widens the answer, it does not overturn the
	// memory the question itself matched best (without the pin, one
	// golden question among 10,000 distractors lost its answer from the
	// top three).
	feedbackPin = 1
	// feedbackPasses is how many times feedback runs, each seeded from
	// the ranking the previous pass left: the memories a first pass
	// lifted name the words of the answer's remaining parts (LoCoMo's
	// multi-hop all@10 0.246 -> 0.254, recall@10 0.716 -> 0.728 with one
	// more pass; the golden sets unchanged).
	feedbackPasses = 2
	// feedbackSharpness is the power of a seed memory's score relative
	// to the best one by which its words count: 2 lets the best memory's
	// words lead (LoCoMo's tuning half, with irregular forms on: recall@5
	// 0.649 -> 0.652, multi-hop all@10 0.230 -> 0.257; 1.5 and 3 alike).
	feedbackSharpness = 2.0
)

// feedbackTerm is a word of the first pass's best memories and its weight.
type feedbackTerm struct {
	term string
	w    float64
}

// feedbackLocked picks the words to ask for in the second pass: the terms
// of the best feedbackDocs memories in acc (weighted by the memory's score
// relative to the best one, to the power feedbackSharpness, and by the
// term's idf) that the question does not already ask for and that another
// memory holds.
func (ix *Index) feedbackLocked(s *scratch, terms []queryTerm, opt Options, N float64) []feedbackTerm {
	top := make([]scored, 0, feedbackDocs+1)
	for _, id := range s.hit {
		top = ix.keepBest(top, scored{id, s.acc[id]}, feedbackDocs)
	}
	if len(top) == 0 || top[0].score <= 0 {
		return nil
	}
	asked := make(map[string]bool, len(terms))
	for _, qt := range terms {
		asked[qt.term] = true
		for _, x := range qt.exp {
			asked[x.term] = true
		}
	}
	w := map[string]float64{}
	for _, d := range top {
		rel := math.Pow(d.score/top[0].score, feedbackSharpness)
		for _, t := range ix.byID[d.id].terms {
			df := len(ix.postings[t])
			if asked[t] || df < 2 {
				continue
			}
			w[t] += rel * idf(N, float64(df))
		}
	}
	out := make([]feedbackTerm, 0, len(w))
	for t, v := range w {
		out = append(out, feedbackTerm{t, v})
	}
	slices.SortFunc(out, func(a, b feedbackTerm) int {
		if a.w != b.w {
			if a.w > b.w {
				return -1
			}
			return 1
		}
		if a.term < b.term {
			return -1
		}
		return 1
	})
	if len(out) > feedbackTerms {
		out = out[:feedbackTerms]
	}
	return out
}

// feedbackPass adds the feedback passes' scores into s.acc. It returns the
// first pass's best feedbackPin memories (of at most n), whose place
// feedback does not change.
func (ix *Index) feedbackPass(s *scratch, terms []queryTerm, opt Options, N float64, avg *[numFields]float64, n int, named map[int32]int) []scored {
	if feedbackDocs <= 0 || feedbackTerms <= 0 || feedbackWeight <= 0 || feedbackPasses <= 0 {
		return nil
	}
	fb := ix.feedbackLocked(s, terms, opt, N)
	if len(fb) == 0 {
		return nil
	}
	var pinned []scored
	if keep := min(n, feedbackPin); keep > 0 {
		for _, id := range s.hit {
			sc := s.acc[id] * float64(ix.meta[id].prior)
			sc *= math.Pow(1+nameWeight, float64(named[id]))
			pinned = ix.keepBest(pinned, scored{id, sc}, keep)
		}
	}
	for pass := 0; pass < feedbackPasses && len(fb) > 0; pass++ {
		if pass > 0 {
			fb = ix.feedbackLocked(s, terms, opt, N)
		}
		ix.addFeedback(s, fb, N, avg, opt)
	}
	return pinned
}

// addFeedback adds one feedback pass's scores into s.acc, each term at
// feedbackWeight times its weight relative to the strongest.
func (ix *Index) addFeedback(s *scratch, fb []feedbackTerm, N float64, avg *[numFields]float64, opt Options) {
	// Only memories the question itself matched are reordered: one that
	// shares none of its words is not an answer however much it shares
	// with the answers ("ethiopian" must not bring back "be brief").
	for _, f := range fb {
		ix.scoreTerm(s, f.term, feedbackWeight*f.w/fb[0].w, N, avg, opt)
		for _, id := range s.touched {
			if s.acc[id] > 0 {
				s.acc[id] += s.best[id]
			}
			s.best[id] = 0
		}
		s.touched = s.touched[:0]
	}
}

// mergeBest adds the current term's best score per doc into the total.
func (ix *Index) mergeBest(s *scratch) {
	for _, id := range s.touched {
		if s.acc[id] == 0 {
			s.hit = append(s.hit, id)
		}
		s.acc[id] += s.best[id]
		s.best[id] = 0
	}
	s.touched = s.touched[:0]
}
