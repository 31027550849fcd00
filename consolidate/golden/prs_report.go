package golden

import (
	"fmt"
	"io"
	"strings"
)

// PRSummary is the figures of the pull-request set.
type PRSummary struct {
	Facts, Correct   int     // facts, and those that retired exactly what they had to
	Supersedes       int     // facts that had to retire something
	Siblings         int     // facts that retired a memory of their own source (goal: 0)
	Queries          int     // new pull requests
	RecallAt3        float64 // mean share of the wanted memories shown
	PrecisionAt3     float64 // mean share of the shown memories wanted
	Stale, Ranked    int     // superseded memories among the ranked hits, and hits ranked
	BatchPrompt      bool    // every extraction carried the batch prompt
	ConflictAccuracy float64 // Correct / Facts
}

// Summarize counts r.
func (r PRResult) Summarize() PRSummary {
	s := PRSummary{Facts: len(r.Facts), Queries: len(r.Queries), BatchPrompt: r.Calls > 0 && r.Extract == r.Calls}
	for _, f := range r.Facts {
		if f.OK() {
			s.Correct++
		}
		if len(f.Want) > 0 {
			s.Supersedes++
		}
		if f.Sibling {
			s.Siblings++
		}
	}
	for _, q := range r.Queries {
		s.RecallAt3 += float64(q.Found) / float64(len(q.Query.Want))
		if len(q.Shown) > 0 {
			s.PrecisionAt3 += float64(q.Found) / float64(len(q.Shown))
		}
		s.Stale += len(q.Stale)
		s.Ranked += q.Ranked
	}
	if s.Queries > 0 {
		s.RecallAt3 /= float64(s.Queries)
		s.PrecisionAt3 /= float64(s.Queries)
	}
	if s.Facts > 0 {
		s.ConflictAccuracy = float64(s.Correct) / float64(s.Facts)
	}
	return s
}

// StalenessRate is the share of ranked hits that were superseded.
func (s PRSummary) StalenessRate() float64 {
	if s.Ranked == 0 {
		return 0
	}
	return float64(s.Stale) / float64(s.Ranked)
}

// Pass reports whether the hard goals hold: no stale memory recalled, no
// sibling superseded, every conflict decided as expected, the batch
// prompt always used.
func (s PRSummary) Pass() bool {
	return s.Stale == 0 && s.Siblings == 0 && s.Correct == s.Facts && s.BatchPrompt
}

// WritePRsText prints the pull-request set's figures, and with verbose
// every miss.
func WritePRsText(w io.Writer, label string, r PRResult, verbose bool) {
	s := r.Summarize()
	fmt.Fprintf(w, "pull requests (%s): %d pull requests and issues, %d facts (%d supersede cases), %d new pull requests\n",
		label, len(PRHistory), s.Facts, s.Supersedes, s.Queries)
	fmt.Fprintf(w, "  recall@3 %.3f  precision@3 %.3f  staleness rate %.3f (%d of %d ranked hits superseded; goal: 0)\n",
		s.RecallAt3, s.PrecisionAt3, s.StalenessRate(), s.Stale, s.Ranked)
	fmt.Fprintf(w, "  conflict detection accuracy %.3f (%d/%d facts retired exactly what they had to); siblings superseded: %d (goal: 0)\n",
		s.ConflictAccuracy, s.Correct, s.Facts, s.Siblings)
	fmt.Fprintf(w, "  extraction calls with the pull-request prompt: %d/%d\n", r.Extract, r.Calls)
	for _, f := range r.Facts {
		if !f.OK() {
			fmt.Fprintf(w, "  MISS %s %s: retired [%s], want [%s]\n", f.Source, f.Slug, strings.Join(f.Got, " "), strings.Join(f.Want, " "))
		}
	}
	if !verbose {
		return
	}
	for _, q := range r.Queries {
		if q.Found < len(q.Query.Want) || len(q.Stale) > 0 {
			fmt.Fprintf(w, "  %-34q shown [%s], want [%s], stale [%s]\n", q.Query.Title, strings.Join(q.Shown, " "), strings.Join(q.Query.Want, " "), strings.Join(q.Stale, " "))
		}
	}
}
