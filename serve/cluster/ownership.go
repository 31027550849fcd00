package cluster

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Ownership is what serve needs of a cluster: take a user before running
// its worker, let it go when leaving, find who holds a user, and know
// whether it may still write a user's repository.
type Ownership interface {
	// Acquire takes user for this node, or confirms it already holds it.
	// A user held by another node is an *OwnedError (errors.Is
	// ErrOwnedElsewhere) naming the owner.
	Acquire(ctx context.Context, user string) (Grant, error)
	// Release lets user go (after its worker flushed and pushed); a user
	// this node does not hold is no error.
	Release(ctx context.Context, user string) error
	// Owner is the member holding user, ErrNoOwner when nobody does.
	Owner(ctx context.Context, user string) (Member, error)
	// MayWrite reports whether this node holds user and its fence still
	// stands: false from the moment the node can no longer be sure that
	// nobody else was granted the user.
	MayWrite(user string) bool
	// Self is this node as the others see it.
	Self() Member
	// Close releases every user and leaves the cluster.
	Close(ctx context.Context) error
}

// Member is one serve node of a cluster.
type Member struct {
	Name      string    `json:"name"`
	Advertise string    `json:"advertise"` // host:port of its HTTP front
	Since     time.Time `json:"since"`
}

// Grant is a user taken by a node: At is the moment the transaction that
// took it was sent, the earliest instant the node could hold it.
type Grant struct {
	User  string
	Node  string
	Lease int64
	At    time.Time
}

// Claim is one user's owner as stored in etcd.
type Claim struct {
	Node  string    `json:"node"`
	Since time.Time `json:"since"`
}

var (
	// ErrOwnedElsewhere: another node holds the user.
	ErrOwnedElsewhere = errors.New("the user is served by another node")
	// ErrNoOwner: no node holds the user.
	ErrNoOwner = errors.New("no node serves the user")
	// ErrFenced: this node's session ended (or cannot be trusted any
	// more); it holds nobody until a new session starts.
	ErrFenced = errors.New("this node lost its cluster session")
	// ErrNodeTaken: another live node already uses this node name.
	ErrNodeTaken = errors.New("another node already uses this name")
	// ErrBadName: a user or node name that cannot be a key.
	ErrBadName = errors.New("not a valid name for the cluster")
)

// OwnedError is ErrOwnedElsewhere with the owner's name.
type OwnedError struct{ Owner string }

func (e *OwnedError) Error() string {
	return fmt.Sprintf("%v: %s", ErrOwnedElsewhere, e.Owner)
}

func (e *OwnedError) Is(target error) bool { return target == ErrOwnedElsewhere }

// Key prefixes in etcd.
const (
	usersPrefix = "/mindmount/users/"
	nodesPrefix = "/mindmount/nodes/"
)

// CheckName refuses names that would not make one plain key segment.
func CheckName(s string) error {
	if s == "" || len(s) > 200 {
		return fmt.Errorf("%w: %q", ErrBadName, s)
	}
	for _, r := range s {
		ok := r == '-' || r == '_' || r == '.' || r == '@' ||
			(r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9')
		if !ok {
			return fmt.Errorf("%w: %q", ErrBadName, s)
		}
	}
	if s == "." || s == ".." {
		return fmt.Errorf("%w: %q", ErrBadName, s)
	}
	return nil
}
