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
	"slices"
	"strings"

	"github.com/mindmount/mindmount/cmd/mindmount/host"
	"github.com/mindmount/mindmount/cmd/mindmount/httpapi"
	"github.com/mindmount/mindmount/cmd/mindmount/mcpserver"
	"github.com/mindmount/mindmount/hooks/remote"
	"github.com/mindmount/mindmount/memgraph"
	"github.com/mindmount/mindmount/memgraph/recall"
)

// httpFront is mindmount serve --http: the reference server's API and MCP.
type httpFront struct {
	addr, keyFile string
	githubAPI     string
	insecure      bool
	cors          originList
	autoUsers     string // UIDRANGE, "" for off
	bound         string // the address listened on, once started
}

// originList is the repeatable --cors flag.
type originList []string

func (l *originList) String() string { return strings.Join(*l, ",") }

func (l *originList) Set(v string) error {
	if err := httpapi.CheckOrigin(v); err != nil {
		return err
	}
	*l = append(*l, v)
	return nil
}

func init() {
	f := &httpFront{}
	serveFronts = append(serveFronts, &serveFront{
		name: "http",
		flags: func(fl *flag.FlagSet) {
			fl.StringVar(&f.addr, "http", "", "serve the HTTP API (chat, bye, consolidate, recall, health, MCP at /mcp) on `ADDR`, e.g. 127.0.0.1:8080")
			fl.StringVar(&f.keyFile, "api-key-file", "", "read the admin API key from `FILE` (default $MINDMOUNT_API_KEY)")
			fl.StringVar(&f.githubAPI, "github-api", remote.DefaultGitHubAPI, "GitHub REST API base `URL` for /v1/git/setup (GitHub Enterprise: https://HOST/api/v3)")
			fl.BoolVar(&f.insecure, "insecure-listen", false, "allow --http on a non-loopback address without an API key or user tokens")
			fl.Var(&f.cors, "cors", "let web pages from `ORIGIN` (https://app.example.com) call the HTTP API; repeat for more; * (any origin) only on a loopback address")
			fl.StringVar(&f.autoUsers, "auto-users", "", "add a user the HTTP API does not know on its first request, with the next free uid of `UIDRANGE` (e.g. 20000-29999); off by default")
		},
		start: f.start,
		ready: func() string {
			if f.bound == "" {
				return ""
			}
			return "http on " + f.bound
		},
	})
}

// start listens and serves until ctx ends. The readiness line of mindmount
// serve then ends with "http on ADDR", the bound address (so :0 works).
func (f *httpFront) start(ctx context.Context, h *host.Host) (func() error, error) {
	if f.addr == "" {
		return func() error { return nil }, nil
	}
	key, err := adminKey(f.keyFile)
	if err != nil {
		return nil, err
	}
	var provision func(context.Context, string) error
	if f.autoUsers != "" {
		uids, err := parseUIDRange(f.autoUsers)
		if err != nil {
			return nil, err
		}
		provision = (&autoUsers{root: h.Root(), uids: uids, reload: h.Reload}).provision
	}
	tokens := httpapi.OpenTokens(h.Root())
	ln, err := net.Listen("tcp", f.addr)
	if err != nil {
		return nil, err
	}
	if key == "" && tokens.Count() == 0 && !f.insecure && !isLoopback(ln.Addr()) {
		ln.Close()
		return nil, fmt.Errorf("--http %s: no API key (MINDMOUNT_API_KEY, --api-key-file) and no user tokens (mindmount users token), so only a loopback address is allowed; add --insecure-listen to serve anyone who can reach %s", f.addr, f.addr)
	}
	if slices.Contains(f.cors, "*") && !isLoopback(ln.Addr()) {
		ln.Close()
		return nil, fmt.Errorf("--cors '*' lets any web page call the API: allowed on a loopback address only; name the origins (--cors https://app.example.com) for %s", f.addr)
	}
	log := slog.Default()
	srv := httpapi.New(httpapi.Config{
		Users:     h,
		Pool:      servePool.Load(),
		AdminKey:  key,
		Tokens:    tokens,
		CORS:      f.cors,
		Provision: provision,
		MCP: mcpserver.NewHandler(func(r *http.Request) (*host.Runtime, func(), error) {
			return h.Acquire(r.Context(), httpapi.RequestUser(r))
		}, mcpserver.Options{Logger: log, Version: versionString()}),
		Version: versionString(),
		// A user's GitHub token is kept in ROOT/credentials/<id>, where
		// the daemon's sync service (sync.go) finds it for later pushes.
		Git: &remote.API{
			GitHubAPI:   f.githubAPI,
			Credentials: func(id string) remote.Credentials { return remote.CredentialsFor(h.Root(), id) },
			Logger:      log,
		},
		Logger: log,
	})
	done := make(chan struct{})
	var serveErr error
	go func() {
		defer close(done)
		serveErr = srv.Serve(ctx, ln)
	}()
	go warmUsers(ctx, h, warmMax, log)
	f.bound = ln.Addr().String()
	// wait may be called more than once (serve watches it and waits for
	// it at shutdown).
	return func() error { <-done; return serveErr }, nil
}

// adminKey reads the admin key from file, else MINDMOUNT_API_KEY. The key is
// never printed; an error names the file, not its content.
func adminKey(file string) (string, error) {
	if file == "" {
		return strings.TrimSpace(os.Getenv("MINDMOUNT_API_KEY")), nil
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return "", fmt.Errorf("--api-key-file: %w", err)
	}
	k := strings.TrimSpace(string(b))
	if k == "" {
		return "", errors.New("--api-key-file: the file is empty")
	}
	return k, nil
}

func isLoopback(a net.Addr) bool {
	ta, ok := a.(*net.TCPAddr)
	return ok && ta.IP.IsLoopback()
}

// warmMax bounds how many users serve --http loads when it starts.
const warmMax = 32

// warmUsers loads up to max registered users, one after the other, in the
// background: loading a user (opening the repository, reading every
// memory, starting its tracker) is what a first chat after a start would
// otherwise pay, 10 to 20 times a warm one. They unload when idle, as any
// user does. It stops when ctx ends.
func warmUsers(ctx context.Context, h *host.Host, max int, log *slog.Logger) {
	for i, u := range h.Users() {
		if i >= max || ctx.Err() != nil {
			return
		}
		if u.Loaded {
			continue
		}
		rt, release, err := h.Acquire(ctx, u.ID)
		if err != nil {
			log.Debug("warm-up: user not loaded", "user", u.ID, "err", err)
			continue
		}
		// What a chat's system prompt builds on first use: the compiled
		// context and the recall index.
		rt.Graph.Context(memgraph.ContextOptions{})
		rt.Graph.RecallContext(ctx, "warm-up", recall.Options{K: 1})
		release()
	}
}
