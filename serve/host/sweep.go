package host

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/mindmount/mindmount/memgraph/team"
)

// registryView is the daemon's view of ROOT/users.json, Host's and Workers'
// alike: which version it last read, so a lookup or the idle sweep
// re-reads it only when "mindmount users" changed it beside the daemon.
type registryView struct {
	root   string
	reload func() error // re-reads the users (Host.Reload, Workers.Reload); nil: never
	log    *slog.Logger
	seen   atomic.Pointer[string] // registryStamp last read
}

// read records the version the daemon just read.
func (r *registryView) read(stamp string) { r.seen.Store(&stamp) }

// reloadIfChanged re-reads the users when the file changed since.
func (r *registryView) reloadIfChanged() {
	if r.reload == nil {
		return
	}
	if seen := r.seen.Load(); seen != nil && *seen == registryStamp(r.root) {
		return
	}
	if err := r.reload(); err != nil {
		r.log.Warn("re-read users", "err", err)
	}
}

// registryStamp identifies the registryView's current version cheaply (size
// and mtime of the users and of the teams: a membership changed beside the
// daemon is applied by the same re-read, SIGHUP or not).
func registryStamp(root string) string {
	s := ""
	for _, name := range []string{RegistryFile, team.ConfigFile} {
		if fi, err := os.Stat(filepath.Join(root, name)); err == nil {
			s += fmt.Sprintf("%d-%d;", fi.Size(), fi.ModTime().UnixNano())
		} else {
			s += "-;"
		}
	}
	return s
}

// idleSweeps is the daemon's one idle loop, Host's and Workers' alike:
// every quarter of unloadAfter (at least 10ms, at most 5s, so a user
// added beside the daemon shows up soon) it re-reads a changed registryView
// and calls sweep, which unloads what was idle for unloadAfter, until ctx
// ends.
func idleSweeps(ctx context.Context, unloadAfter time.Duration, reg *registryView, sweep func(context.Context)) {
	every := min(max(unloadAfter/4, 10*time.Millisecond), 5*time.Second)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			reg.reloadIfChanged()
			sweep(ctx)
		}
	}
}
