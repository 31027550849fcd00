package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/mindmount/mindmount/serve/host"
)

// UserRef is a userId as a client sends it. The reference server takes
// any JSON string or number ("alice", 42); so do we, and a number counts
// as its text ("42").
type UserRef string

// UnmarshalJSON accepts a string or a number; anything else is an error.
func (u *UserRef) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if bytes.Equal(b, []byte("null")) {
		*u = ""
		return nil
	}
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*u = UserRef(s)
		return nil
	}
	var n json.Number
	if err := json.Unmarshal(b, &n); err != nil {
		return errors.New("userId: want a string or a number")
	}
	*u = UserRef(n.String())
	return nil
}

// anonymous is the user the reference server serves when a request names
// none; only with --auto-users do we do the same.
const anonymous = "anonymous"

// ErrNoUserID is a request that names no user on a server that does not
// add users itself (no --auto-users): it is refused (400) rather than
// served as the reference's anonymous user, because here every user is an
// account the operator added, with its own uid and repository, and
// pouring every client that forgets its userId into one shared memory
// would let them read each other's.
var ErrNoUserID = errors.New("userId is missing: send the user's id (\"userId\" in the JSON body, ?userId= or the X-Mindmount-User header); a request without one is served as the user \"anonymous\" only by serve --auto-users")

// badUserID answers 400 for a userId that names no valid user.
func badUserID(w http.ResponseWriter, err error) {
	if errors.Is(err, ErrNoUserID) {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	writeError(w, http.StatusBadRequest, "userId: "+err.Error())
}

// userID turns a client's userId into the ID of a user directory. Without
// auto-provisioning it must be a valid ID as it is. With it, a registered
// ID is that user, and any other string is mapped by host.IDFor, so that
// "Alice", "alice" and "alice_bob" are three users.
func (s *Server) userID(ref UserRef) (string, error) {
	id := string(ref)
	if s.cfg.Provision == nil {
		if id == "" {
			return "", ErrNoUserID
		}
		return id, host.ValidID(id)
	}
	if id == "" {
		id = anonymous
	}
	if host.ValidID(id) == nil {
		if _, err := s.list().Lookup(id); err == nil {
			return id, nil
		}
	}
	return host.IDFor(id), nil
}

// acquire loads user id; with auto-provisioning, a user the registry does
// not know is provisioned first (its first request pays for making the
// repository, once).
func (s *Server) acquire(ctx context.Context, id string) (*host.Runtime, func(), error) {
	rt, release, err := s.cfg.Users.Acquire(ctx, id)
	if !errors.Is(err, host.ErrUnknownUser) || s.cfg.Provision == nil {
		return rt, release, err
	}
	if err := s.cfg.Provision(ctx, id); err != nil {
		s.logUser(id).Warn("auto-users: cannot provision", "err", err)
		return nil, nil, fmt.Errorf("%w: %w", errProvision, err)
	}
	s.logUser(id).Info("auto-users: provisioned")
	return s.cfg.Users.Acquire(ctx, id)
}

// errProvision wraps why a new user could not be provisioned.
var errProvision = errors.New("the new user cannot be provisioned")

// userFor resolves the client's userId, checks the caller's right to the
// user and acquires it; it answers the error itself. id is the user's ID
// from here on (logs, sessions, the model pool).
func (s *Server) userFor(w http.ResponseWriter, r *http.Request, c caller, ref UserRef) (rt *host.Runtime, release func(), id string, ok bool) {
	id, err := s.userID(ref)
	if err != nil {
		badUserID(w, err)
		return nil, nil, "", false
	}
	if !allowed(w, c, id) {
		return nil, nil, "", false
	}
	rt, release, err = s.acquire(r.Context(), id)
	if err != nil {
		s.userError(w, err)
		return nil, nil, "", false
	}
	return rt, release, id, true
}

// list is who lists and looks up users: the front's List (Config.Forward)
// or Users.
func (s *Server) list() UserList {
	if s.cfg.Forward != nil {
		return s.cfg.List
	}
	return s.cfg.Users
}
