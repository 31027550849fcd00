package fs

import (
	"bytes"
	"context"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/hanwen/go-fuse/v2/fuse"
)

// callerTTL bounds how long a pid's process name is trusted: pids are
// reused, but a burst of writes from one process costs one /proc read.
const callerTTL = 2 * time.Second

// callerNames resolves the process that issued a FUSE request to its name
// (/proc/PID/comm): "vim", "sed", "python3". The tracker maps it to a commit
// author.
type callerNames struct {
	mu    sync.Mutex
	names map[uint32]callerName
	now   func() time.Time
	// writer, when set, hears of every writing process (the multi-user
	// mount notes its sandbox for the commit: users_sandbox.go).
	writer func(pid uint32)
}

type callerName struct {
	name string
	at   time.Time
}

func newCallerNames() *callerNames {
	return &callerNames{names: map[uint32]callerName{}, now: time.Now}
}

// of returns the caller's process name, or "" when the kernel did not say
// (async release) or the process is already gone.
func (c *callerNames) of(ctx context.Context) string {
	caller, ok := fuse.FromContext(ctx)
	if !ok || caller == nil || caller.Pid == 0 {
		return ""
	}
	if c.writer != nil {
		c.writer(caller.Pid)
	}
	return c.pid(caller.Pid)
}

func (c *callerNames) pid(pid uint32) string {
	now := c.now()
	c.mu.Lock()
	if e, ok := c.names[pid]; ok && now.Sub(e.at) < callerTTL {
		c.mu.Unlock()
		return e.name
	}
	c.mu.Unlock()

	b, err := os.ReadFile("/proc/" + strconv.FormatUint(uint64(pid), 10) + "/comm")
	if err != nil {
		return ""
	}
	name := string(bytes.TrimSpace(b))

	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.names) > 1024 { // a fork bomb of writers must not grow this forever
		for p, e := range c.names {
			if now.Sub(e.at) >= callerTTL {
				delete(c.names, p)
			}
		}
		if len(c.names) > 1024 {
			c.names = map[uint32]callerName{}
		}
	}
	c.names[pid] = callerName{name: name, at: now}
	return name
}
