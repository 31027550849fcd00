package host

import (
	"bytes"
	"errors"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/mindmount/mindmount/fs/gitrepo"
	"github.com/mindmount/mindmount/memgraph"
)

// Status renders the daemon's report (MNT/.mindmount/status, mindmount status
// --root): users loaded, the model queue, and per user its state, last
// commit, consolidation and invalid files. queue describes the model pool
// ("" when there is none). Unloaded users are read from disk, not loaded.
func (h *Host) Status(queue string) []byte {
	users := h.Users()
	loaded := 0
	for _, u := range users {
		if u.Loaded {
			loaded++
		}
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "mindmount serve %s\n", h.cfg.Root)
	if h.fromDisk {
		fmt.Fprintf(&b, "users: %d registered, read from disk (what a running daemon has loaded is not known here)\n", len(users))
	} else {
		fmt.Fprintf(&b, "users: %d registered, %d loaded (unload after %s idle)\n", len(users), loaded, h.cfg.UnloadAfter)
	}
	if queue != "" {
		fmt.Fprintf(&b, "model: %s\n", queue)
	}
	b.WriteString("\n")
	tw := tabwriter.NewWriter(&b, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "USER\tUID:GID\tSTATE\tINVALID\tLAST COMMIT\tCONSOLIDATION")
	for _, u := range users {
		fmt.Fprintf(tw, "%s\t%d:%d\t%s\n", u.ID, u.UID, u.GID, h.userLine(u))
	}
	tw.Flush()
	return b.Bytes()
}

// LastCommitReader returns the status line of the last commit of the
// repository at dir ("" when it cannot tell). StatusOf never opens a
// user's repository itself: it runs as root (mindmount status --root), so
// its caller reads each one with the owner's rights (cmd's asOwner rule).
type LastCommitReader func(dir string) string

// StatusOf is Status for a ROOT no daemon serves (mindmount status --root):
// every user read from disk, each user's last commit by last.
func StatusOf(root string, last LastCommitReader) ([]byte, error) {
	entries, err := ReadRegistry(root)
	if err != nil {
		return nil, err
	}
	if last == nil {
		return nil, errors.New("host.StatusOf: no reader of the last commit")
	}
	h := &Host{cfg: Config{Root: root}, users: map[string]*slot{}, fromDisk: true, lastOf: last}
	held := readHeld(root)
	for _, e := range entries {
		s := &slot{entry: e}
		if hb := held[e.ID]; hb != nil && time.Now().Before(hb.Until) {
			s.err = hb
		}
		h.users[e.ID] = s
	}
	// What was just read is all there is: no daemon, nothing to re-read.
	h.reg.root = root
	h.reg.read(registryStamp(root))
	return h.Status(""), nil
}

func (h *Host) userLine(u User) string {
	state, invalid, cons := "idle", "-", "-"
	var last string
	if u.Loaded {
		state = "loaded"
		if rt, release, err := h.acquireLoaded(u.ID); err == nil {
			invalid = fmt.Sprint(len(rt.Tracker.Invalid()))
			if rt.Consolidator != nil {
				cons = rt.Consolidator.Status()
			}
			last = lastCommit(rt.Repo)
			release()
		}
	} else if hb := (*HeldBackError)(nil); errors.As(u.Err, &hb) {
		state = statusField(fmt.Sprintf("held back until %s: %s %d times in a row", hb.Until.Format(time.TimeOnly), hb.Exit, hb.Times))
	} else if u.Err != nil {
		state = "broken: " + statusField(u.Err.Error())
	}
	if last == "" {
		if !IsMindmountRepo(u.Dir) {
			if u.Err == nil {
				state = "broken: not a mindmount repository"
			}
			return fmt.Sprintf("%s\t%s\t%s\t%s", state, invalid, "-", cons)
		}
		if h.lastOf != nil {
			last = h.lastOf(u.Dir)
		}
	}
	if last == "" {
		last = "-"
	}
	return fmt.Sprintf("%s\t%s\t%s\t%s", state, invalid, last, cons)
}

// acquireLoaded is Acquire for a user that is loaded; it never loads one.
func (h *Host) acquireLoaded(id string) (*Runtime, func(), error) {
	h.mu.Lock()
	s := h.users[id]
	h.mu.Unlock()
	if s == nil {
		return nil, nil, ErrUnknownUser
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.rt == nil {
		return nil, nil, ErrUnknownUser
	}
	rt := s.rt
	s.refs++
	return rt, func() {
		s.mu.Lock()
		s.refs--
		s.mu.Unlock()
	}, nil
}

// LastCommitLine is the status line of the last commit of the repository
// at dir, read with the caller's rights ("" when there is none): what a
// LastCommitReader runs as the repository's owner.
func LastCommitLine(dir string) string {
	r, err := gitrepo.Open(dir)
	if err != nil {
		return ""
	}
	return lastCommit(r)
}

func lastCommit(r *gitrepo.Repo) string {
	c, err := r.LastCommit()
	if err != nil || c.Hash == "" {
		return ""
	}
	return fmt.Sprintf("%s %s %s", gitrepo.ShortHash(c.Hash), c.When.Format(time.DateTime), statusField(c.Subject))
}

// statusField keeps a table cell on one line and short.
func statusField(s string) string { return memgraph.ClipLine(s, 80) }
