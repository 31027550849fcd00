package httpapi

import (
	"context"
	"errors"
	"net/http"
	"strconv"

	"github.com/mindmount/mindmount/consolidate"
)

// The review of consolidation dreams (consolidate/review.go), as
// "mindmount review" offers it:
//
//	GET  /v1/review?userId=              the waiting dreams, with what each proposes
//	GET  /v1/review/{n}?userId=          one dream and its diff
//	POST /v1/review/{n}/approve          {"userId","tip"}: merge it, if its
//	                                     branch is still at tip (the one shown)
//	POST /v1/review/{n}/reject           {"userId","reason"}: drop it for good
//
// Under serve each request runs in the user's worker, like every other.
func (s *Server) routeReview() {
	s.mux.Handle("GET /v1/review", s.auth(s.reviewList))
	s.mux.Handle("GET /v1/review/{n}", s.auth(s.reviewShow))
	s.mux.Handle("POST /v1/review/{n}/approve", s.auth(s.reviewApprove))
	s.mux.Handle("POST /v1/review/{n}/reject", s.auth(s.reviewReject))
}

// DreamJSON is a waiting dream as the API shows it.
type DreamJSON struct {
	N            int                          `json:"n"`
	Branch       string                       `json:"branch"`
	Base         string                       `json:"base"`
	Tip          string                       `json:"tip"`
	Sources      []string                     `json:"sources"`
	Added        int                          `json:"added"`
	Updated      int                          `json:"updated"`
	Contradicted int                          `json:"contradicted"`
	Changes      []consolidate.ProposedChange `json:"changes"`
	Diff         string                       `json:"diff,omitempty"`
}

func dreamJSON(d consolidate.Dream) DreamJSON {
	a, u, x := d.Counts()
	return DreamJSON{N: d.N, Branch: d.Branch, Base: d.Base, Tip: d.Tip, Sources: append([]string{}, d.Sources...),
		Added: a, Updated: u, Contradicted: x, Changes: append([]consolidate.ProposedChange{}, d.Changes...)}
}

// reviewer finds the caller's reviewer (host.Runtime.Reviewer: review
// needs no model); ok false has answered.
func (s *Server) reviewer(w http.ResponseWriter, r *http.Request, c caller, ref UserRef) (*consolidate.Consolidator, func(), bool) {
	rt, release, _, ok := s.userFor(w, r, c, ref)
	if !ok {
		return nil, nil, false
	}
	return rt.Reviewer(), release, true
}

// waiting finds the caller's consolidator (?userId=) and its waiting
// dreams; ok false has answered.
func (s *Server) waiting(w http.ResponseWriter, r *http.Request, c caller) (*consolidate.Consolidator, []consolidate.Dream, func(), bool) {
	cs, release, ok := s.reviewer(w, r, c, UserRef(r.URL.Query().Get("userId")))
	if !ok {
		return nil, nil, nil, false
	}
	ds, err := cs.Dreams()
	if err != nil {
		release()
		s.reviewError(w, err)
		return nil, nil, nil, false
	}
	return cs, ds, release, true
}

func (s *Server) reviewList(w http.ResponseWriter, r *http.Request, c caller) {
	cs, ds, release, ok := s.waiting(w, r, c)
	if !ok {
		return
	}
	defer release()
	out := make([]DreamJSON, 0, len(ds))
	for _, d := range ds {
		out = append(out, dreamJSON(d))
	}
	writeJSON(w, http.StatusOK, map[string]any{"merge": string(cs.MergeMode()), "dreams": out})
}

func (s *Server) reviewShow(w http.ResponseWriter, r *http.Request, c caller) {
	n, ok := dreamNumber(w, r)
	if !ok {
		return
	}
	cs, release, ok := s.reviewer(w, r, c, UserRef(r.URL.Query().Get("userId")))
	if !ok {
		return
	}
	defer release()
	d, diff, err := cs.ShowDream(n)
	if err != nil {
		s.reviewError(w, err)
		return
	}
	out := dreamJSON(d)
	out.Diff = diff
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) reviewApprove(w http.ResponseWriter, r *http.Request, c caller) {
	s.reviewVerdict(w, r, c, func(cs *consolidate.Consolidator, ctx context.Context, n int, req verdict) (string, error) {
		return cs.Approve(ctx, n, req.Tip)
	}, "merged")
}

func (s *Server) reviewReject(w http.ResponseWriter, r *http.Request, c caller) {
	s.reviewVerdict(w, r, c, func(cs *consolidate.Consolidator, ctx context.Context, n int, req verdict) (string, error) {
		return cs.Reject(ctx, n, req.Reason)
	}, "rejected")
}

// verdict is the body of approve and reject.
type verdict struct {
	UserID UserRef `json:"userId"`
	Tip    string  `json:"tip"`    // approve: the dream's tip as it was shown
	Reason string  `json:"reason"` // reject: why
}

// reviewVerdict answers approve and reject: {"status", "commit"}.
func (s *Server) reviewVerdict(w http.ResponseWriter, r *http.Request, c caller,
	act func(*consolidate.Consolidator, context.Context, int, verdict) (string, error), status string) {
	n, ok := dreamNumber(w, r)
	if !ok {
		return
	}
	var req verdict
	if r.ContentLength != 0 && !s.decodeBody(w, r, &req) {
		return
	}
	if req.UserID == "" {
		req.UserID = UserRef(r.URL.Query().Get("userId"))
	}
	cs, release, ok := s.reviewer(w, r, c, req.UserID)
	if !ok {
		return
	}
	defer release()
	ctx, cancel := context.WithTimeout(r.Context(), handlerTimeout)
	defer cancel()
	hash, err := act(cs, ctx, n, req)
	if err != nil {
		s.reviewError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"status": status, "n": n, "commit": hash})
}

func dreamNumber(w http.ResponseWriter, r *http.Request) (int, bool) {
	n, err := strconv.Atoi(r.PathValue("n"))
	if err != nil || n < 1 {
		writeError(w, http.StatusBadRequest, "n: want a dream's number (GET /v1/review lists them)")
		return 0, false
	}
	return n, true
}

// reviewError maps the review's typed errors; anything else is logged.
func (s *Server) reviewError(w http.ResponseWriter, err error) {
	switch {
	case errors.Is(err, consolidate.ErrNoDream):
		writeError(w, http.StatusNotFound, "no waiting dream has that number (GET /v1/review lists them)")
	case errors.Is(err, consolidate.ErrNoTip):
		writeError(w, http.StatusBadRequest, "tip: want the dream's tip as GET /v1/review/{n} showed it")
	case errors.Is(err, consolidate.ErrDreamMoved):
		writeError(w, http.StatusConflict, "the dream changed since it was shown; nothing was merged (GET /v1/review/{n} shows it again)")
	case errors.Is(err, consolidate.ErrDreamConflict):
		writeError(w, http.StatusConflict, "the dream could not be merged: an uncommitted edit is in the way; it still waits (try again once the edit is committed or fixed)")
	default:
		s.log.Warn("review failed", "err", err)
		writeError(w, http.StatusInternalServerError, "the review action failed; see the daemon's log")
	}
}
