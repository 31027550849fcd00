package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/mindmount/mindmount/serve/host"
	"github.com/mindmount/mindmount/serve/httpapi"
	"github.com/mindmount/mindmount/serve/webui"
)

// uiCommand is "mindmount ui".
var uiCommand = newCommand(command{
	name:    "ui",
	usage:   "ui REPO [--http 127.0.0.1:7420]",
	summary: "a web page to see, search, audit and undo a memory repository",
	help: `Serves a web page for the mindmount repository REPO: the memories ranked as
the agent's index ranks them (and which fall below its budget), one memory
with its history, diffs and provenance, the timeline of commits by author,
search, status and a picture of the memory graph. From the page you can
revert any commit, retire or reactivate a memory, edit one (validated and
scanned for secrets like a write to the mount; nothing is committed until it
is valid) and ask for a consolidation now. Each of those is one commit,
authored "ui".

The first line on standard output is the address to open, with a one-time
login token:

    http://127.0.0.1:7420/?token=…

Opening it logs that browser in (a session cookie) and the token is spent;
restart mindmount ui for a new one. The page listens on a loopback address
unless --insecure-listen is given (the token and the session would cross
the network unencrypted).

Like "mindmount watch", it commits changes made beside it and consolidates
transcripts. Started while another daemon serves REPO (a mount, a watch,
MCP), the page is served by that daemon through its control socket (the
repository's one writer; only its own user may attach), on a loopback
address, until SIGINT or SIGTERM or that daemon's end. SIGINT or SIGTERM
commits what is pending and exits 0.

Example:

    mindmount init ~/memory
    mindmount ui ~/memory --http 127.0.0.1:7420`,
}, runUI)

// uiOptions are the flags of "mindmount ui".
type uiOptions struct {
	daemon   daemonFlags
	addr     string
	insecure bool
}

func (o *uiOptions) AddFlags(fl *flag.FlagSet) {
	o.daemon.AddFlags(fl)
	fl.StringVar(&o.addr, "http", "127.0.0.1:7420", "listen on `ADDR` (port 0 picks a free one)")
	fl.BoolVar(&o.insecure, "insecure-listen", false, "allow a non-loopback --http address")
}

// uiDaemon serves the web page of a repository.
func runUI(_ context.Context, o *uiOptions, args []string) error {
	if len(args) != 1 {
		return errUsage
	}
	if err := requireMindmountRepo(args[0]); err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if attached, err := attachUI(ctx, args[0], o.addr); attached {
		return err
	}
	return uiDaemon(args[0], o.addr, o.insecure, o.daemon.runtimeConfig(false, slog.Default()))
}

// uiDaemon serves the web page of dir on addr until a signal arrives. The
// address is taken (or refused) first, before the repository is opened:
// a ui that cannot start says only why.
func uiDaemon(dir, addr string, insecure bool, cfg host.RuntimeConfig) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	defer ln.Close() // closed by the server once it serves; this is for a failed start
	loopback := httpapi.IsLoopback(ln.Addr())
	if !loopback && !insecure {
		return fmt.Errorf("--http %s is not a loopback address: the login token and session would cross the network in clear text; use 127.0.0.1, or add --insecure-listen", addr)
	}
	return runDaemon(dir, cfg, func(ctx context.Context, rt *host.Runtime) (<-chan error, func(bool) error, error) {
		ui, err := webui.New(webui.Config{Single: rt, LoopbackHosts: loopback, Logger: cfg.Logger})
		if err != nil {
			return nil, nil, err
		}
		hs := &http.Server{
			Handler:           ui,
			ReadHeaderTimeout: 10 * time.Second,
			ReadTimeout:       30 * time.Second,
			IdleTimeout:       2 * time.Minute,
			MaxHeaderBytes:    64 << 10,
			ErrorLog:          slog.NewLogLogger(cfg.Logger.Handler(), slog.LevelWarn),
			// Requests (the live event streams too) end with ctx.
			BaseContext: func(net.Listener) context.Context { return ctx },
		}
		fmt.Fprintln(stdout, ui.LoginURL(ln.Addr().String()))
		// A memory's history is quick once the history index reaches
		// HEAD (packs keep it there); a first build runs in the background.
		maintained := make(chan struct{})
		go func() {
			defer close(maintained)
			if err := rt.Repo.IndexHistory(ctx); err != nil && ctx.Err() == nil {
				cfg.Logger.Warn("cannot index the history; a memory's history may be slow to show", "err", err)
			}
		}()
		ended := make(chan error, 1)
		go func() {
			err := hs.Serve(ln)
			if errors.Is(err, http.ErrServerClosed) {
				err = nil
			}
			ended <- err
		}()
		return ended, func(bool) error {
			sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			if err := hs.Shutdown(sctx); err != nil {
				hs.Close()
			}
			<-maintained // ctx is over: git was stopped
			return nil
		}, nil
	})
}
