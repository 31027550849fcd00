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
}

// Hits converts recall results to their JSON form (shared with the CLI).
func Hits(hits []recall.Hit) []Hit {
	out := make([]Hit, 0, len(hits))
	for _, h := range hits {
		out = append(out, Hit{h.Path, h.Description, h.Score, h.Kind, h.Status, h.Snippet})
	}
	return out
}

// maxK bounds ?k=.
const maxK = 100

// recall answers GET /v1/recall?userId=&q=&k=5[&kind=user|character][&all=1]
// with the ranking mindmount recall --json prints.
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
	hits := rt.Graph.RecallContext(r.Context(), q.Get("q"), recall.Options{K: k, Kind: kind, All: all})
	writeJSON(w, http.StatusOK, Hits(hits))
}
