package remote

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/mindmount/mindmount/serve/control"
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

// Serve runs the sync loop of a daemon until ctx ends: a full sync on
// start and every FetchEvery, a push PushDelay after the last Kick (a
// commit), retries with a doubling backoff after a failure, and requests
// from "mindmount sync" through the daemon's control socket (Answer). A repository
// without a remote costs one config read per wake-up. Network work never
// holds a lock a write needs; only the merge commit itself goes through
// Options.Writer.
func (s *Syncer) Serve(ctx context.Context, t Timing) {
	t.fill()
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
		case reply = <-s.reqs:
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

// Answer serves the control socket's sync verb ("mindmount sync" while a
// daemon runs): one full sync in the loop of Serve, then the sync state.
func (s *Syncer) Answer(ctx context.Context, _ control.Request) (control.Answer, error) {
	reply := make(chan error, 1)
	select {
	case s.reqs <- reply:
	case <-ctx.Done():
		return control.Answer{}, ctx.Err()
	}
	var err error
	select {
	case err = <-reply:
	case <-ctx.Done():
		return control.Answer{}, ctx.Err()
	}
	data, jerr := json.Marshal(ReadState(s.r))
	if jerr != nil {
		return control.Answer{}, errors.Join(err, jerr)
	}
	return control.Answer{Data: data}, err
}

// ErrNoDaemon means no daemon serves the repository's sync requests.
var ErrNoDaemon = control.ErrNoDaemon

// AskDaemon asks the daemon serving gitDir's repository to sync now and
// waits for the outcome. It returns ErrNoDaemon when none listens.
func AskDaemon(ctx context.Context, gitDir string) (State, error) {
	a, err := control.Ask(ctx, gitDir, control.Request{Verb: control.Sync})
	if errors.Is(err, control.ErrNoDaemon) {
		return State{}, err
	}
	var st State
	if len(a.Data) > 0 {
		if jerr := json.Unmarshal(a.Data, &st); jerr != nil && err == nil {
			err = fmt.Errorf("the daemon's sync state: %w", jerr)
		}
	}
	return st, err
}
