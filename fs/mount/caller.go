package mount

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
	names pidCache
	now   func() time.Time
	// writer, when set, hears of every writing process (serve's per-user
	// mount notes its sandbox for the commit: sandbox.go).
	writer func(pid uint32)
}

func newCallerNames() *callerNames {
	return &callerNames{now: time.Now}
}

// pidCache remembers one answer per process for callerTTL (pids are
// reused) and for at most 1024 processes (a fork bomb of writers must not
// grow it forever): process names here, sandboxes in users_sandbox.go.
type pidCache struct {
	mu sync.Mutex
	m  map[uint32]pidEntry
}

type pidEntry struct {
	name string
	at   time.Time
}

// get returns the answer for pid as of now: the remembered one while it is
// fresh, else find's, remembered unless find says it failed.
func (c *pidCache) get(pid uint32, now time.Time, find func(pid uint32) (string, bool)) string {
	c.mu.Lock()
	if e, ok := c.m[pid]; ok && now.Sub(e.at) < callerTTL {
		c.mu.Unlock()
		return e.name
	}
	c.mu.Unlock()
	name, ok := find(pid)
	if !ok {
		return name
	}
	c.put(pid, name, now)
	return name
}

// put remembers name for pid as of now.
func (c *pidCache) put(pid uint32, name string, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.m) > 1024 {
		for p, e := range c.m {
			if now.Sub(e.at) >= callerTTL {
				delete(c.m, p)
			}
		}
		if len(c.m) > 1024 {
			clear(c.m)
		}
	}
	if c.m == nil {
		c.m = map[uint32]pidEntry{}
	}
	c.m[pid] = pidEntry{name: name, at: now}
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
	return c.names.get(pid, c.now(), processName)
}

// processName reads /proc/PID/comm; false when the process is gone.
func processName(pid uint32) (string, bool) {
	b, err := os.ReadFile("/proc/" + strconv.FormatUint(uint64(pid), 10) + "/comm")
	if err != nil {
		return "", false
	}
	return string(bytes.TrimSpace(b)), true
}
