package main

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/mindmount/mindmount/serve/host"
)

// uidRange is the --auto-users UIDRANGE: the uids new users get, in order.
type uidRange struct{ first, last uint32 }

// errRangeFull means every uid of the --auto-users range is taken.
var errRangeFull = errors.New("every uid of the --auto-users range is taken: widen it, or remove users")

// parseUIDRange reads "FIRST-LAST" (or one uid). uid 0 is never handed out.
func parseUIDRange(s string) (uidRange, error) {
	a, b, ok := strings.Cut(s, "-")
	if !ok {
		b = a
	}
	first, err1 := strconv.ParseUint(strings.TrimSpace(a), 10, 32)
	last, err2 := strconv.ParseUint(strings.TrimSpace(b), 10, 32)
	if err1 != nil || err2 != nil || first > last || first == 0 {
		return uidRange{}, fmt.Errorf("--auto-users %q: want FIRST-LAST, two uids above 0, e.g. 20000-29999", s)
	}
	return uidRange{uint32(first), uint32(last)}, nil
}

// defaultUIDRange is the range mindmount users add picks a uid from when
// run as root without --uid.
const defaultUIDRange = "20000-29999"

// next is the lowest uid of the range that is nobody's yet (inUse:
// host.UIDInUse — a registered user, a system account, the owner of a
// file in ROOT).
func (r uidRange) next(inUse func(uint32) bool) (uint32, error) {
	for uid := r.first; ; uid++ {
		if !inUse(uid) {
			return uid, nil
		}
		if uid == r.last {
			return 0, errRangeFull
		}
	}
}

// autoUsers provisions the users serve --http --auto-users adds on first
// use: a private repository at ROOT/users/<id> as mindmount users add
// makes it, owned by the next free uid of the range (its own group), and
// registered. One at a time in a process, and the uid picked under the
// registry lock, so that two first requests never get one uid.
type autoUsers struct {
	root   string
	uids   uidRange
	reload func() error // the host re-reads the registry
	mu     sync.Mutex
}

// provision adds user id unless it is registered already (another request
// may have added it while this one waited).
func (a *autoUsers) provision(ctx context.Context, id string) error {
	if err := host.ValidID(id); err != nil {
		return err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if err := ctx.Err(); err != nil {
		return err
	}
	// The uid is chosen under the registry lock, from the users registered
	// by then: a users add in another process may have taken one since.
	_, _, err := host.AddNewUser(a.root, host.NewUser{Entry: host.Entry{ID: id}, OnlyNew: true,
		Pick: func(users []host.Entry) (uint32, uint32, error) {
			uid, err := a.uids.next(host.UIDInUse(a.root, users))
			return uid, uid, err
		}})
	if errors.Is(err, host.ErrUserExists) {
		return nil // another request added it while this one waited
	}
	if err != nil {
		return err
	}
	return a.reload()
}
