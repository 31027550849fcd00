package httpapi

import (
	"errors"
	"net/http"

	"github.com/mindmount/mindmount/serve/host"
)

// mountHere is POST /v1/cluster/mount {"userId"}: a cluster node is
// asked to serve the user's mount because a sandbox on it binds that
// mount. Only the admin key may ask (it moves users between nodes).
func (s *Server) mountHere(w http.ResponseWriter, r *http.Request, c caller) {
	if !c.admin {
		writeError(w, http.StatusForbidden, "only the admin key may move a user's mount")
		return
	}
	var body struct {
		UserID UserRef `json:"userId"`
	}
	if !s.decodeBody(w, r, &body) {
		return
	}
	id := string(body.UserID)
	if id == "" {
		writeError(w, http.StatusBadRequest, "userId is required")
		return
	}
	mnt, err := s.cfg.MountHere(r.Context(), id)
	if errors.Is(err, host.ErrUnknownUser) {
		writeError(w, http.StatusNotFound, "unknown user")
		return
	}
	if err != nil {
		s.logUser(id).Warn("cluster: moving a mount here failed", "err", err)
		writeError(w, http.StatusServiceUnavailable, "the user could not be moved to this node: "+err.Error())
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"ok": true, "userId": id, "mount": mnt})
}
