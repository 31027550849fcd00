package httpapi

import (
	"net/http"
	"strconv"

	"github.com/mindmount/mindmount/memgraph"
	"github.com/mindmount/mindmount/memgraph/recall"
)

// Hit is one recall result as mindmount recall --json prints it.
type Hit struct {
	Path        string  `json:"path"`
	Description string  `json:"description"`
	Score       float64 `json:"score"`
	Kind        string  `json:"kind"`
	Status      string  `json:"status"`
	Snippet     string  `json:"snippet"`
	// Scope is "personal" or the team a hit comes from, set only when a
	// team is attached (memgraph.ScopeOf).
	Scope string `json:"scope,omitempty"`
}

// ScopedHits is Hits with each hit's scope named.
func ScopedHits(hits []recall.Hit) []Hit {
	out := Hits(hits)
	for i := range out {
		out[i].Scope, _ = memgraph.ScopeOf(out[i].Path)
	}
	return out
}

// Hits converts recall results to their JSON form (shared with the CLI).
func Hits(hits []recall.Hit) []Hit {
	out := make([]Hit, 0, len(hits))
	for _, h := range hits {
		out = append(out, Hit{Path: h.Path, Description: h.Description, Score: h.Score, Kind: h.Kind, Status: h.Status, Snippet: h.Snippet})
	}
	return out
}

// maxK bounds ?k=.
const maxK = 100

// recall answers GET /v1/recall?userId=&q=&k=5[&kind=user|character][&all=1]
// [&scope=personal|TEAM|all] with the ranking mindmount recall --json
// prints; with a team attached, each hit names its scope.
func (s *Server) recall(w http.ResponseWriter, r *http.Request, c caller) {
	q := r.URL.Query()
	k := 5
	if ks := q.Get("k"); ks != "" {
		n, err := strconv.Atoi(ks)
		if err != nil || n <= 0 || n > maxK {
			writeError(w, http.StatusBadRequest, "k: want a number from 1 to 100")
			return
		}
		k = n
	}
	kind := q.Get("kind")
	switch kind {
	case "", string(memgraph.KindUser), string(memgraph.KindCharacter):
	default:
		writeError(w, http.StatusBadRequest, "kind: want user or character")
		return
	}
	if q.Get("q") == "" {
		writeError(w, http.StatusBadRequest, "q is empty")
		return
	}
	all, _ := strconv.ParseBool(q.Get("all"))
	rt, release, _, ok := s.userFor(w, r, c, UserRef(q.Get("userId")))
	if !ok {
		return
	}
	defer release()
	hits, err := rt.Graph.RecallScoped(r.Context(), q.Get("q"), recall.Options{K: k, Kind: kind, All: all}, q.Get("scope"))
	if err != nil {
		writeError(w, http.StatusBadRequest, "scope: "+err.Error())
		return
	}
	if len(rt.Graph.Scopes()) > 0 {
		writeJSON(w, http.StatusOK, ScopedHits(hits))
		return
	}
	writeJSON(w, http.StatusOK, Hits(hits))
}
