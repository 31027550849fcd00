package main

import (
	"context"
	"crypto/subtle"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"

	"github.com/mindmount/mindmount/cmd/mindmount/host"
	"github.com/mindmount/mindmount/cmd/mindmount/httpapi"
	"github.com/mindmount/mindmount/cmd/mindmount/mcpserver"
	"github.com/mindmount/mindmount/cmd/mindmount/webui"
	"github.com/mindmount/mindmount/hooks/remote"
)

// httpFront is mindmount serve --http: the reference server's API and MCP.
type httpFront struct {
	addr, keyFile string
	githubAPI     string
	insecure      bool
	bound         string // the address listened on, once started
}

func init() {
	f := &httpFront{}
	serveFronts = append(serveFronts, &serveFront{
		name: "http",
		flags: func(fl *flag.FlagSet) {
			fl.StringVar(&f.addr, "http", "", "serve the HTTP API (chat, bye, consolidate, recall, health, MCP at /mcp, the web page at /ui/) on `ADDR`, e.g. 127.0.0.1:8080")
			fl.StringVar(&f.keyFile, "api-key-file", "", "read the admin API key from `FILE` (default $MINDMOUNT_API_KEY)")
			fl.StringVar(&f.githubAPI, "github-api", remote.DefaultGitHubAPI, "GitHub REST API base `URL` for /v1/git/setup (GitHub Enterprise: https://HOST/api/v3)")
			fl.BoolVar(&f.insecure, "insecure-listen", false, "allow --http on a non-loopback address without an API key or user tokens")
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
	tokens := httpapi.OpenTokens(h.Root())
	ln, err := net.Listen("tcp", f.addr)
	if err != nil {
		return nil, err
	}
	if key == "" && tokens.Count() == 0 && !f.insecure && !isLoopback(ln.Addr()) {
		ln.Close()
		return nil, fmt.Errorf("--http %s: no API key (MINDMOUNT_API_KEY, --api-key-file) and no user tokens (mindmount users token), so only a loopback address is allowed; add --insecure-listen to serve anyone who can reach %s", f.addr, f.addr)
	}
	log := slog.Default()
	ui, err := serveUI(h, key, tokens, log)
	if err != nil {
		ln.Close()
		return nil, err
	}
	srv := httpapi.New(httpapi.Config{
		UI:       ui,
		Users:    h,
		Pool:     servePool.Load(),
		AdminKey: key,
		Tokens:   tokens,
		MCP: mcpserver.NewHandler(func(r *http.Request) (*host.Runtime, func(), error) {
			return h.Acquire(r.Context(), httpapi.RequestUser(r))
		}, mcpserver.Options{Logger: log, Version: version}),
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
	f.bound = ln.Addr().String()
	// wait may be called more than once (serve watches it and waits for
	// it at shutdown).
	return func() error { <-done; return serveErr }, nil
}

// serveUI is the web page at /ui/: a person logs in with their user
// token (mindmount users token) or the admin key, which sees every user.
// A server without either is open to its loopback clients, as the API is.
func serveUI(h *host.Host, key string, tokens *httpapi.TokenStore, log *slog.Logger) (http.Handler, error) {
	return webui.New(webui.Config{Users: h, Prefix: "/ui", Logger: log, Verify: func(tok string) (string, bool, bool) {
		if key != "" && subtle.ConstantTimeCompare([]byte(tok), []byte(key)) == 1 {
			return "", true, true
		}
		if u, ok := tokens.User(tok); ok {
			return u, false, true
		}
		open := key == "" && tokens.Count() == 0
		return "", open, open
	}})
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
