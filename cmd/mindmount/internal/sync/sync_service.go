package sync

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"net"
	"os"
	"path/filepath"
	"time"
)

// Timing tunes a daemon's sync loop. Zero fields take the defaults.
type Timing struct {
	PushDelay  time.Duration // quiet time after a commit before pushing (default 5s)
	FetchEvery time.Duration // periodic fetch + merge (default 5m)
	RetryMin   time.Duration // first retry after a failure (default 15s), doubling
	RetryMax   time.Duration // longest wait between retries (default 10m)
}

func (t *Timing) fill() {
	if t.PushDelay <= 0 {
		t.PushDelay = 5 * time.Second
	}
	if t.FetchEvery <= 0 {
		t.FetchEvery = 5 * time.Minute
	}
	if t.RetryMin <= 0 {
		t.RetryMin = 15 * time.Second
	}
	if t.RetryMax <= 0 {
		t.RetryMax = 10 * time.Minute
	}
}

// socketFile is where a serving daemon listens for "mindmount sync".
const socketFile = "mindmount/sync.sock"

// Serve runs the sync loop of a daemon until ctx ends: a full sync on
// start and every FetchEvery, a push PushDelay after the last Kick (a
// commit), retries with a doubling backoff after a failure, and requests
// from "mindmount sync" on a socket in the git directory. A repository
// without a remote costs one config read per wake-up. Network work never
// holds a lock a write needs; only the merge commit itself goes through
// Options.Writer.
func (s *Syncer) Serve(ctx context.Context, t Timing) {
	t.fill()
	reqs := make(chan chan error)
	if ln, err := s.listen(); err != nil {
		s.log.Warn("mindmount sync requests will not reach this daemon", "err", err)
	} else {
		stop := context.AfterFunc(ctx, func() { ln.Close() })
		defer stop()
		defer ln.Close()
		go s.accept(ctx, ln, reqs)
	}
	var (
		nextFetch = time.Now() // on start
		nextPush  time.Time
		retryAt   time.Time
		failures  int
	)
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		var reply chan error
		select {
		case <-ctx.Done():
			return
		case reply = <-reqs:
		case <-s.kicks():
			nextPush = time.Now().Add(t.PushDelay)
		case <-timer.C:
		}
		now := time.Now()
		var err error
		ran := false
		switch {
		case reply != nil:
			_, err = s.Sync(ctx)
			ran = true
			reply <- err
		case !retryAt.IsZero() && now.Before(retryAt):
			// backing off
		case !nextFetch.IsZero() && !now.Before(nextFetch), !retryAt.IsZero():
			if _, uerr := URL(s.r.Dir()); uerr == nil {
				_, err = s.Sync(ctx)
				ran = true
			}
			nextFetch, nextPush = now.Add(t.FetchEvery), time.Time{}
		case !nextPush.IsZero() && !now.Before(nextPush):
			if _, uerr := URL(s.r.Dir()); uerr == nil {
				_, err = s.Push(ctx)
				ran = true
			}
			nextPush = time.Time{}
		}
		if ran {
			if err != nil && ctx.Err() == nil {
				failures++
				wait := t.RetryMin << min(failures-1, 16)
				retryAt = now.Add(min(wait, t.RetryMax))
			} else {
				failures, retryAt = 0, time.Time{}
			}
		}
		if !retryAt.IsZero() && now.Before(retryAt) {
			// Backing off: a push or fetch due meanwhile waits for the
			// retry, which does both.
			timer.Reset(retryAt.Sub(now))
		} else {
			timer.Reset(nextWake(now, nextFetch, nextPush, retryAt))
		}
	}
}

// nextWake is the time until the earliest pending deadline.
func nextWake(now time.Time, ts ...time.Time) time.Duration {
	best := time.Hour
	for _, t := range ts {
		if !t.IsZero() {
			best = min(best, max(t.Sub(now), time.Millisecond))
		}
	}
	return best
}

// Kick tells Serve that a commit happened: a push follows after the delay.
// It never blocks.
func (s *Syncer) Kick() {
	select {
	case s.kickCh() <- struct{}{}:
	default:
	}
}

func (s *Syncer) kickCh() chan struct{} {
	s.kickOnce.Do(func() { s.kick = make(chan struct{}, 1) })
	return s.kick
}

func (s *Syncer) kicks() <-chan struct{} { return s.kickCh() }

// listen opens the request socket, replacing a stale one.
func (s *Syncer) listen() (net.Listener, error) {
	p := filepath.Join(s.r.GitDir(), filepath.FromSlash(socketFile))
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return nil, err
	}
	if c, err := net.Dial("unix", p); err == nil {
		c.Close()
		return nil, errors.New("another daemon answers sync requests for this repository")
	}
	os.Remove(p)
	return net.Listen("unix", p)
}

// accept answers each connection with the outcome of one full sync.
func (s *Syncer) accept(ctx context.Context, ln net.Listener, reqs chan chan error) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		go func() {
			defer c.Close()
			if _, err := bufio.NewReader(c).ReadString('\n'); err != nil {
				return
			}
			reply := make(chan error, 1)
			select {
			case reqs <- reply:
			case <-ctx.Done():
				return
			}
			var out struct {
				OK    bool   `json:"ok"`
				Error string `json:"error,omitempty"`
				State State  `json:"state"`
			}
			select {
			case err := <-reply:
				out.OK = err == nil
				if err != nil {
					out.Error = err.Error()
				}
			case <-ctx.Done():
				out.Error = "the daemon is stopping"
			}
			out.State = ReadState(s.r)
			json.NewEncoder(c).Encode(out)
		}()
	}
}

// ErrNoDaemon means no daemon serves the repository's sync requests.
var ErrNoDaemon = errors.New("no daemon serves this repository")

// AskDaemon asks the daemon serving gitDir's repository to sync now and
// waits for the outcome. It returns ErrNoDaemon when none listens.
func AskDaemon(ctx context.Context, gitDir string) (State, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, "unix", filepath.Join(gitDir, filepath.FromSlash(socketFile)))
	if err != nil {
		return State{}, ErrNoDaemon
	}
	defer c.Close()
	stop := context.AfterFunc(ctx, func() { c.Close() })
	defer stop()
	if _, err := c.Write([]byte("sync\n")); err != nil {
		return State{}, err
	}
	var out struct {
		OK    bool   `json:"ok"`
		Error string `json:"error"`
		State State  `json:"state"`
	}
	if err := json.NewDecoder(c).Decode(&out); err != nil {
		return State{}, errors.New("the daemon did not answer the sync request")
	}
	if !out.OK {
		return out.State, errors.New(out.Error)
	}
	return out.State, nil
}
