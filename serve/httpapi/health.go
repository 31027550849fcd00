package httpapi

import (
	"errors"
	"net/http"
	"time"

	"github.com/mindmount/mindmount/serve/host"
)

type modelHealth struct {
	Provider   string     `json:"provider"`
	Model      string     `json:"model"`
	LastCallOK *bool      `json:"lastCallOk"` // null before the first call
	LastCall   *time.Time `json:"lastCall,omitempty"`
	Running    int        `json:"running"`
	Queued     int        `json:"queued"`
}

// heldBack is a user's worker not started again for a while.
type heldBack struct {
	Exit  string    `json:"exit"`  // how it ended each time ("signal: killed")
	Times int       `json:"times"` // how many times in a row
	Until time.Time `json:"until"` // when it is tried again
}

// health answers without auth: status, uptime, users and the model. 503
// while the daemon starts (Config.Ready: its users not yet loaded) and
// while it shuts down, so a load balancer sends nothing that would wait.
func (s *Server) health(w http.ResponseWriter, r *http.Request) {
	users := s.list().Users()
	loaded := 0
	// A worker held back after ending the same way again and again: how
	// it ended and until when, never who (this answer needs no
	// credentials); mindmount status --root names the user.
	held := []heldBack{}
	for _, u := range users {
		if u.Loaded {
			loaded++
		}
		var hb *host.HeldBackError
		if errors.As(u.Err, &hb) {
			held = append(held, heldBack{Exit: hb.Exit, Times: hb.Times, Until: hb.Until})
		}
	}
	up := s.cfg.Now().Sub(s.started)
	body := map[string]any{
		"status": "ok", "uptime": up.Round(time.Second).String(), "uptimeSeconds": int64(up.Seconds()),
		"users": len(users), "usersLoaded": loaded, "version": s.cfg.Version,
		"workersHeldBack": held,
	}
	if pl := s.cfg.Pool; pl != nil {
		st := pl.Stats()
		m := modelHealth{Provider: pl.Provider().Name(), Model: pl.Provider().Model(), Running: st.Running, Queued: st.Queued}
		if !st.LastCall.IsZero() {
			ok, at := st.LastOK, st.LastCall
			m.LastCallOK, m.LastCall = &ok, &at
		}
		body["model"] = m
	} else {
		body["model"] = nil
	}
	if s.cfg.Cluster != nil {
		body["cluster"] = s.cfg.Cluster()
	}
	status := http.StatusOK
	switch {
	case s.closing.Load():
		status = http.StatusServiceUnavailable
		body["status"] = "shutting down"
	case s.cfg.Ready != nil && !s.cfg.Ready():
		status = http.StatusServiceUnavailable
		body["status"] = "starting"
		w.Header().Set("Retry-After", "1")
	}
	writeJSON(w, status, body)
}
