package memgraph

import (
	"context"
	"sort"
	"strings"

	"github.com/mindmount/mindmount/memgraph/recall"
)

// rrfK is the constant of reciprocal rank fusion (Cormack et al. 2009):
// a hit at rank r of a list scores 1/(rrfK+r).
const rrfK = 60

// RecallScoped ranks the memories of the scopes sel selects (ScopeAll or
// "": the personal graph and every attached team; ScopePersonal; or one
// team's name) for q. A team's hits carry the path the user opens,
// shared/<team>/<path> (ScopeOf splits it again); personal hits keep
// theirs. With no team attached, or sel ScopePersonal, it is exactly
// RecallContext. An unknown team is ErrUnknownScope.
//
// The rankings are merged by reciprocal rank fusion, not by score: each
// repository has its own index, and keyword scores are not on one scale
// across indexes (a word's weight depends on how many memories of that
// repository hold it), so a small team's ordinary match would outrank a
// strong personal one. Dividing each list by its best score is no better:
// it makes every scope's best hit 1.0 however weak it is. Rank is the one
// measure the lists share. Since a memory lives in one repository only,
// fusion interleaves the lists by rank; a tie (same rank in two lists) goes
// to the higher score, then to the earlier scope (personal first).
func (g *Graph) RecallScoped(ctx context.Context, q string, opt recall.Options, sel string) ([]recall.Hit, error) {
	personal, teams, err := g.SelectScopes(sel)
	if err != nil {
		return nil, err
	}
	if len(teams) == 0 {
		return g.RecallContext(ctx, q, opt), nil
	}
	return RecallAcross(ctx, g, personal, teams, q, opt), nil
}

// RecallAcross is RecallScoped over the given teams, with the personal
// graph g when personal is set, whatever is attached to g.
func RecallAcross(ctx context.Context, g *Graph, personal bool, teams []Scope, q string, opt recall.Options) []recall.Hit {
	var lists [][]recall.Hit
	if personal {
		lists = append(lists, g.RecallContext(ctx, q, opt))
	}
	for _, s := range teams {
		hits := s.Graph.RecallContext(ctx, q, opt)
		for i := range hits {
			hits[i].Path = SharedPrefix(s.Name) + hits[i].Path
		}
		lists = append(lists, hits)
	}
	return fuseRanks(lists, opt.K)
}

// fuseRanks merges rankings of disjoint hits by reciprocal rank fusion and
// keeps the best k (0: 10, as recall.Options.K).
func fuseRanks(lists [][]recall.Hit, k int) []recall.Hit {
	if k <= 0 {
		k = 10
	}
	type fused struct {
		h     recall.Hit
		rrf   float64
		scope int
	}
	var all []fused
	for li, l := range lists {
		for r, h := range l {
			all = append(all, fused{h, 1 / float64(rrfK+r+1), li})
		}
	}
	sort.SliceStable(all, func(i, j int) bool {
		a, b := all[i], all[j]
		if a.rrf != b.rrf {
			return a.rrf > b.rrf
		}
		if a.h.Score != b.h.Score {
			return a.h.Score > b.h.Score
		}
		return a.scope < b.scope
	})
	if len(all) > k {
		all = all[:k]
	}
	out := make([]recall.Hit, len(all))
	for i, f := range all {
		out[i] = f.h
	}
	return out
}

// ParseScopedQuery reads the scope a .mindmount/search/ file name asks
// for: "@eng deploy freeze" searches team eng, "@personal …" the personal
// repository, "@all …" everything; a name without a leading "@word " is
// the whole question, over every scope.
func ParseScopedQuery(name string) (sel, q string) {
	rest, ok := strings.CutPrefix(name, "@")
	if !ok {
		return "", name
	}
	sel, q, ok = strings.Cut(rest, " ")
	if !ok || sel == "" {
		return "", name
	}
	return sel, strings.TrimLeft(q, " ")
}
