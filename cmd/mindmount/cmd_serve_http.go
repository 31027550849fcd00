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
	"time"

	"github.com/mindmount/mindmount/serve/host"
	"github.com/mindmount/mindmount/serve/httpapi"
	"github.com/mindmount/mindmount/serve/remote"
	"github.com/mindmount/mindmount/serve/webui"
)

// httpFront is mindmount serve --http: the reference server's API and MCP.
type httpFront struct {
	addr, keyFile string
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

// serveMaxBody is serve's --max-body, handed on to the workers, which
// read the bodies the front forwards.
var serveMaxBody int64 = httpapi.DefaultMaxBody

func init() {
	f := &httpFront{}
	serveFronts = append(serveFronts, &serveFront{
		name: "http",
		flags: func(fl *flag.FlagSet) {
			fl.StringVar(&f.addr, "http", "", "serve the HTTP API (chat, bye, consolidate, recall, health, MCP at /mcp, the web page at /ui/) on `ADDR`, e.g. 127.0.0.1:8080")
			fl.StringVar(&f.keyFile, "api-key-file", "", "read the admin API key from `FILE` (default $MINDMOUNT_API_KEY)")
			fl.StringVar(&serveGitHubAPI, "github-api", remote.DefaultGitHubAPI, "GitHub REST API base `URL` for /v1/git/setup (GitHub Enterprise: https://HOST/api/v3)")
			fl.Int64Var(&serveMaxBody, "max-body", httpapi.DefaultMaxBody, "answer 413 to a request body larger than `BYTES` (the reference server has no limit; raise this for clients that send long transcripts)")
			fl.BoolVar(&f.insecure, "insecure-listen", false, "start --http on a non-loopback address before any API key or user token exists (every request but /health is refused until one does)")
			fl.Var(&f.cors, "cors", "let web pages from `ORIGIN` (https://app.example.com) call the HTTP API; repeat for more; * (any origin) only on a loopback address")
			fl.StringVar(&f.autoUsers, "auto-users", "", "add a user the HTTP API does not know on its first request, with the next free uid of `UIDRANGE` (e.g. 20000-29999); off by default")
		},
		start: f.start,
		set:   func() bool { return f.addr != "" },
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
func (f *httpFront) start(ctx context.Context, ws *host.Workers) (func() error, error) {
	if f.addr == "" {
		return func() error { return nil }, nil
	}
	key, err := adminKey(f.keyFile)
	if err != nil {
		return nil, err
	}
	provision, err := f.provisioner(ws)
	if err != nil {
		return nil, err
	}
	tokens := httpapi.OpenTokens(ws.Root())
	ln, err := f.listen(key, tokens)
	if err != nil {
		return nil, err
	}
	// One authentication decision for the API, MCP and the web page,
	// latched for this listener before anything is served.
	auth := httpapi.NewAuth(key, tokens, false)
	auth.RequireFor(ln.Addr())
	log := slog.Default()
	ui, err := serveUI(ws, auth, log)
	if err != nil {
		ln.Close()
		return nil, err
	}
	// The front checks credentials and forwards each request to the
	// user's worker, which answers it as the user (chat, bye, consolidate,
	// recall, git, MCP, the web page's pages): nothing here touches a
	// user's repository.
	fwd, clusterHealth := frontForwarder(ws, key)
	warmed := make(chan struct{})
	srv := httpapi.New(httpapi.Config{
		Ready:     func() bool { return closed(warmed) },
		Forward:   fwd,
		Cluster:   clusterHealth,
		MountHere: clusterMountHere(),
		List:      ws,
		UI:        ui,
		Pool:      ws.Pool(),
		Auth:      auth,
		CORS:      f.cors,
		Provision: provision,
		MaxBody:   serveMaxBody,
		Version:   versionString(),
		Logger:    log,
	})
	done := make(chan struct{})
	var serveErr error
	go func() {
		defer close(done)
		serveErr = srv.Serve(ctx, ln)
	}()
	// The readiness line waits for the warm-up (at most warmWait), so a
	// client that waits for it finds its first chat as quick as the next;
	// users past that go on warming in the background, and /health says
	// 503 "starting" until they are all warm.
	go func() {
		defer close(warmed)
		if clusterForward != nil {
			// In a cluster a node takes a user on the user's first
			// request (a lease in etcd); starting workers here would
			// make a second writer of users another node holds.
			return
		}
		warmWorkers(ctx, ws, warmMax, log)
	}()
	select {
	case <-warmed:
	case <-time.After(warmWait):
	case <-ctx.Done():
	}
	f.bound = ln.Addr().String()
	// wait may be called more than once (serve watches it and waits for
	// it at shutdown).
	return func() error { <-done; return serveErr }, nil
}

// provisioner is --auto-users: a new user's first request provisions them
// with a uid of the range (nil without the flag).
func (f *httpFront) provisioner(ws *host.Workers) (func(context.Context, string) error, error) {
	if f.autoUsers == "" {
		return nil, nil
	}
	uids, err := parseUIDRange(f.autoUsers)
	if err != nil {
		return nil, err
	}
	return (&autoUsers{root: ws.Root(), uids: uids, reload: ws.Reload}).provision, nil
}

// closed reports whether c is closed, without waiting.
func closed(c <-chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

// listen opens the front's listener, refusing an address the credentials
// at hand cannot guard: a non-loopback one without any key or token
// (unless --insecure-listen), or with --cors '*'.
func (f *httpFront) listen(key string, tokens *httpapi.TokenStore) (net.Listener, error) {
	ln, err := net.Listen("tcp", f.addr)
	if err != nil {
		return nil, err
	}
	// A listener that is not loopback always requires credentials
	// (httpapi decides it from ln); without any, nothing could be served.
	if key == "" && tokens.Count() == 0 && !f.insecure && !httpapi.IsLoopback(ln.Addr()) {
		ln.Close()
		return nil, fmt.Errorf("--http %s: no API key (MINDMOUNT_API_KEY, --api-key-file) and no user tokens (mindmount users token ROOT ID), and a non-loopback address always requires one; make one first, or add --insecure-listen to start anyway and refuse every request but /health until one exists", f.addr)
	}
	if slices.Contains(f.cors, "*") && !httpapi.IsLoopback(ln.Addr()) {
		ln.Close()
		return nil, fmt.Errorf("--cors '*' lets any web page call the API: allowed on a loopback address only; name the origins (--cors https://app.example.com) for %s", f.addr)
	}
	return ln, nil
}

// serveGitHubAPI is --github-api, handed to every worker (which answers
// /v1/git/setup as its user).
var serveGitHubAPI = remote.DefaultGitHubAPI

// serveUI is the web page at /ui/: a person logs in with their user
// token (mindmount users token) or the admin key, which sees every user;
// whether a login is good is auth's answer, the API's own. The front
// keeps the sessions; each user's pages are answered by the user's
// worker (cmd_worker.go, webui Trusted), as the user.
func serveUI(ws *host.Workers, auth *httpapi.Auth, log *slog.Logger) (http.Handler, error) {
	return webui.New(webui.Config{Users: uiUsers{ws}, Prefix: "/ui", Logger: log,
		Forward: ws.Forward, Verify: auth.Login})
}

// uiUsers lists serve's users for the web page's admin; their pages come
// from their workers (webui.Config.Forward), never loaded here.
type uiUsers struct{ ws *host.Workers }

func (u uiUsers) Users() []host.User { return u.ws.Users() }

func (u uiUsers) Acquire(context.Context, string) (*host.Runtime, func(), error) {
	return nil, nil, errors.New("serve's users are served by their workers")
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

// warmMax bounds how many users serve --http starts when it starts, and
// warmWait how long its readiness line waits for them.
const (
	warmMax  = 32
	warmWait = 5 * time.Second
)

// warmWorkers starts up to max registered users' workers, one after the
// other, in the background: starting a worker (opening the repository,
// reading every memory, starting its tracker) is what a first chat after
// a start would otherwise pay, 10 to 20 times a warm one. They stop when
// idle, as any worker does. It stops when ctx ends.
func warmWorkers(ctx context.Context, ws *host.Workers, max int, log *slog.Logger) {
	for i, u := range ws.Users() {
		if i >= max || ctx.Err() != nil {
			return
		}
		if u.Loaded {
			continue
		}
		_, release, err := ws.Forward(ctx, u.ID)
		if err != nil {
			log.Debug("warm-up: worker not started", "user", u.ID, "err", err)
			continue
		}
		release()
	}
}
