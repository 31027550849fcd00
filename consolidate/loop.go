package consolidate

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/mindmount/mindmount/consolidate/llm"
	"github.com/mindmount/mindmount/memgraph"
)

// Notify tells the consolidator that a file under transcripts/ changed.
// The change tracker calls it from its commit path, so it only records the
// path and wakes the loop, which re-reads the transcript to count its new
// user messages; other paths are ignored.
func (c *Consolidator) Notify(rel string) {
	if !strings.HasPrefix(rel, memgraph.TranscriptsDir+"/") {
		return
	}
	c.heard.Add(1)
	c.mu.Lock()
	c.lastChange = c.cfg.Now()
	c.dirty[rel] = true
	c.mu.Unlock()
	c.poke()
}

// Heard is how many times Notify reported a transcript changed: once per
// change that reached git through the tracker (a chat is one).
func (c *Consolidator) Heard() int64 { return c.heard.Load() }

// recount refreshes the pending counts of transcripts Notify reported.
func (c *Consolidator) recount() {
	c.mu.Lock()
	dirty := c.dirty
	c.dirty = map[string]bool{}
	c.mu.Unlock()
	for rel := range dirty {
		n := c.newUserMessages(rel)
		c.mu.Lock()
		if n > 0 {
			c.pending[rel] = n
		} else {
			delete(c.pending, rel)
		}
		c.mu.Unlock()
	}
}

// Request asks for a run as soon as possible, even during a backoff.
func (c *Consolidator) Request() {
	c.mu.Lock()
	c.requested = true
	c.mu.Unlock()
	c.poke()
}

func (c *Consolidator) poke() {
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// newUserMessages counts user messages of rel beyond the committed cursor.
func (c *Consolidator) newUserMessages(rel string) int {
	data, err := c.r.Tree().ReadFile(rel, MaxTranscriptSize)
	if err != nil {
		return 0
	}
	cur, err := c.headCursor()
	if err != nil {
		return 0
	}
	t := ParseTranscript(rel, data)
	start, _ := cur.Start(t)
	n := 0
	for _, m := range t.Messages[start:] {
		if (m.Role == RoleUser || m.Role == RoleDocument) && DropNoise(m.Text) != "" {
			n++ // a slash command's echo is not something the user said
		}
	}
	return n
}

// Pending returns the number of new user messages known to wait.
func (c *Consolidator) Pending() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, k := range c.pending {
		n += k
	}
	return n
}

// Loop runs consolidation until ctx ends: when transcripts have been idle
// for cfg.Idle, when cfg.Every new user messages are waiting, or on
// Request. Failed runs back off exponentially (a Request still runs at
// once). Transcripts left from before the loop started count as changed at
// start, so they are consolidated after one idle period.
func (c *Consolidator) Loop(ctx context.Context) {
	if paths, err := c.transcripts(); err == nil {
		for _, rel := range paths {
			if n := c.newUserMessages(rel); n > 0 {
				c.mu.Lock()
				c.pending[rel] = n
				c.lastChange = c.cfg.Now()
				c.mu.Unlock()
			}
		}
	}
	c.recount() // Notify calls that came before the loop
	if e, ok := c.p.(llm.Endpoint); ok {
		if err := e.Ping(ctx); err != nil {
			c.mu.Lock()
			c.waiting = "waiting for a model at " + e.Endpoint()
			c.mu.Unlock()
		}
	}
	for {
		c.recount()
		wait, run := c.due()
		if run {
			c.RunNow(ctx)
			if ctx.Err() != nil {
				return // a cancelled run must not start the next one
			}
			continue
		}
		var timer <-chan time.Time
		var t *time.Timer
		if wait > 0 {
			t = time.NewTimer(wait)
			timer = t.C
		}
		select {
		case <-ctx.Done():
		case <-c.wake:
		case <-timer:
		}
		if t != nil {
			t.Stop()
		}
		if ctx.Err() != nil {
			return
		}
	}
}

// due says whether a run should start now, or how long to wait before
// looking again (0: until woken).
func (c *Consolidator) due() (time.Duration, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.cfg.Now()
	if c.requested {
		return 0, true
	}
	n := 0
	for _, k := range c.pending {
		n += k
	}
	if n == 0 {
		return 0, false
	}
	if c.failures > 0 && now.Before(c.nextTry) {
		return c.nextTry.Sub(now), false
	}
	if n >= c.cfg.Every {
		return 0, true
	}
	idleAt := c.lastChange.Add(c.cfg.Idle)
	if !now.Before(idleAt) {
		return 0, true
	}
	return idleAt.Sub(now), false
}

// RunNow runs a consolidation now, as the loop does when one is due or
// asked for, and records the outcome for Status (then OnStatus) and the
// backoff. A daemon runs it for "mindmount consolidate" too; runs never
// overlap (Run takes the repository's lock).
func (c *Consolidator) RunNow(ctx context.Context) (Report, error) {
	c.mu.Lock()
	c.requested = false
	c.running = true
	c.mu.Unlock()
	rep, err := c.Run(ctx)
	c.record(ctx, rep, err)
	if c.cfg.OnStatus != nil {
		c.cfg.OnStatus()
	}
	return rep, err
}

// record keeps a run's outcome for Status and the backoff.
func (c *Consolidator) record(ctx context.Context, rep Report, err error) {
	now := c.cfg.Now()
	c.mu.Lock()
	defer c.mu.Unlock()
	c.running = false
	if err != nil {
		if ctx.Err() != nil {
			// Shutting down: not a failure to back off from. (Returning
			// here with c.mu held once deadlocked SIGTERM.)
			return
		}
		c.failures++
		back := c.cfg.MinBackoff << min(c.failures-1, 16)
		if back > c.cfg.MaxBackoff || back <= 0 {
			back = c.cfg.MaxBackoff
		}
		c.nextTry = now.Add(back)
		c.waiting = ""
		if errors.Is(err, llm.ErrNoModel) {
			c.waiting = "waiting for a model at " + c.endpoint()
		}
		// The error may quote a model's answer: redacted before it
		// reaches the status file and the log.
		msg := redacted(err.Error())
		c.last = fmt.Sprintf("last run %s failed: %s; next try in %s", now.Format("2006-01-02 15:04:05"), msg, back.Round(time.Second))
		c.log.Warn("consolidation failed", "err", msg, "retry_in", back)
		return
	}
	c.failures, c.waiting = 0, ""
	c.last = fmt.Sprintf("last run %s: %s", now.Format("2006-01-02 15:04:05"), rep)
	// What the run covered is no longer pending: count every known
	// transcript again on the next turn of the loop.
	for rel := range c.pending {
		c.dirty[rel] = true
	}
}

func (c *Consolidator) endpoint() string {
	if e, ok := c.p.(llm.Endpoint); ok {
		return e.Endpoint()
	}
	if c.p != nil {
		return c.p.Name()
	}
	return "(none configured)"
}

// Status is the consolidation line of the status file.
func (c *Consolidator) Status() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var parts []string
	switch {
	case c.p == nil:
		parts = append(parts, "consolidation: no language model configured")
	case c.running:
		parts = append(parts, "consolidation: running with "+c.p.Name()+"/"+c.p.Model())
	case c.waiting != "":
		parts = append(parts, "consolidation: "+c.waiting)
	default:
		parts = append(parts, "consolidation: idle ("+c.p.Name()+"/"+c.p.Model()+")")
	}
	n := 0
	for _, k := range c.pending {
		n += k
	}
	if n > 0 {
		parts = append(parts, fmt.Sprintf("%d new user messages pending", n))
	}
	if c.last != "" {
		parts = append(parts, c.last)
	}
	if n := c.topicConflicts(); n > 0 {
		parts = append(parts, fmt.Sprintf("%d %s two active memories after a retirement (likely missed contradictions; see mindmount check)", n, memgraph.Plural(n, "topic holds", "topics hold")))
	}
	return strings.Join(parts, "; ")
}

// topicConflicts counts memgraph.TopicConflicts, cached per graph version:
// Status is rendered on every read of the status file. c.mu is held.
func (c *Consolidator) topicConflicts() int {
	if c.g == nil {
		return 0
	}
	if v := c.g.Version(); v != c.conflictsAt || !c.conflictsKnown {
		c.conflicts, c.conflictsAt, c.conflictsKnown = len(c.g.TopicConflicts()), v, true
	}
	return c.conflicts
}
