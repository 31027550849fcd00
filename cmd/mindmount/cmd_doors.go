package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/mindmount/mindmount/fs/gitrepo"
	"github.com/mindmount/mindmount/serve/control"
	"github.com/mindmount/mindmount/serve/host"
	"github.com/mindmount/mindmount/serve/httpapi"
	"github.com/mindmount/mindmount/serve/mcpserver"
	"github.com/mindmount/mindmount/serve/webui"
)

// One daemon per repository serves every door. A running daemon (mount,
// watch, mcp, ui) opens MCP and the web page on its control socket, where
// the kernel's word on the peer's uid is the authentication; "mindmount
// mcp REPO" and "mindmount ui REPO" started beside it attach there instead
// of opening the repository a second time, so every write still goes
// through the daemon's one tracker.

// openDoors makes rt's daemon serve MCP sessions and web pages to the
// commands that attach to it.
func openDoors(rt *host.Runtime, log *slog.Logger) {
	rt.HandleStream(control.MCP, func(context.Context, control.Request) (control.Answer, func(context.Context, net.Conn), error) {
		return control.Answer{}, func(ctx context.Context, c net.Conn) {
			srv := mcpserver.New(rt, mcpserver.Options{Logger: log, Version: versionString()})
			if err := srv.Run(ctx, lineTransport(c, c, defaultMaxLine)); !isClosed(err) && !errors.Is(err, context.Canceled) {
				log.Warn("an attached MCP session ended", "err", err)
			}
		}, nil
	})
	p := &pages{rt: rt, log: log, byID: map[string]*webui.Server{}}
	rt.HandleStream(control.UI, p.login)
	rt.HandleStream(control.UIHTTP, p.conn)
	rt.Handle(control.Add, func(ctx context.Context, req control.Request) (control.Answer, error) {
		return answerAdd(ctx, rt, req)
	})
	rt.Handle(control.Recall, func(ctx context.Context, req control.Request) (control.Answer, error) {
		return answerRecall(ctx, rt, req) // cmd_recall_daemon.go
	})
}

// pages are the web pages of the "mindmount ui" commands attached to a
// daemon: one each, with its own one-time login, for as long as its
// command runs.
type pages struct {
	rt  *host.Runtime
	log *slog.Logger

	mu   sync.Mutex
	byID map[string]*webui.Server
}

// login makes a page for a ui command listening on req.Addr (a loopback
// address: the command checked, and the page refuses other Host headers)
// and keeps it while the command's connection stays open.
func (p *pages) login(context.Context, control.Request) (control.Answer, func(context.Context, net.Conn), error) {
	ui, err := webui.New(webui.Config{Single: p.rt, LoopbackHosts: true, Logger: p.log})
	if err != nil {
		return control.Answer{}, nil, err
	}
	b := make([]byte, 16)
	rand.Read(b)
	id := hex.EncodeToString(b)
	p.mu.Lock()
	p.byID[id] = ui
	p.mu.Unlock()
	return control.Answer{Session: id}, func(ctx context.Context, c net.Conn) {
		// The command asks for its URL once it knows its address.
		var addr [256]byte
		n, _ := c.Read(addr[:])
		if n > 0 {
			fmt.Fprintf(c, "%s\n", ui.LoginURL(string(addr[:n])))
		}
		io.Copy(io.Discard, c) // until the command ends
		p.mu.Lock()
		delete(p.byID, id)
		p.mu.Unlock()
	}, nil
}

// conn serves one HTTP connection of page req.Session.
func (p *pages) conn(_ context.Context, req control.Request) (control.Answer, func(context.Context, net.Conn), error) {
	p.mu.Lock()
	ui := p.byID[req.Session]
	p.mu.Unlock()
	if ui == nil {
		return control.Answer{}, nil, fmt.Errorf("%w: no such page", control.ErrNotServed)
	}
	return control.Answer{}, func(ctx context.Context, c net.Conn) {
		done := make(chan struct{})
		var once sync.Once
		hs := &http.Server{
			Handler:           ui,
			ReadHeaderTimeout: 10 * time.Second,
			IdleTimeout:       2 * time.Minute,
			MaxHeaderBytes:    64 << 10,
			ErrorLog:          slog.NewLogLogger(p.log.Handler(), slog.LevelWarn),
			BaseContext:       func(net.Listener) context.Context { return ctx },
			ConnState: func(_ net.Conn, st http.ConnState) {
				if st == http.StateClosed || st == http.StateHijacked {
					once.Do(func() { close(done) })
				}
			},
		}
		hs.Serve(&oneConn{c: c, done: done})
		<-done
	}, nil
}

// oneConn is a listener of one connection: the next Accept waits until
// it is closed.
type oneConn struct {
	c    net.Conn
	done <-chan struct{}
	once sync.Once
}

func (l *oneConn) Accept() (net.Conn, error) {
	var c net.Conn
	l.once.Do(func() { c = l.c })
	if c != nil {
		return c, nil
	}
	<-l.done
	return nil, net.ErrClosed
}

func (l *oneConn) Close() error   { return nil }
func (l *oneConn) Addr() net.Addr { return l.c.LocalAddr() }

// attach asks the daemon serving dir for the stream verb of req. attached
// is false when no daemon answers: the caller serves dir itself.
func attach(ctx context.Context, dir string, req control.Request) (c net.Conn, a control.Answer, gitDir string, attached bool, err error) {
	r, err := gitrepo.Open(dir)
	if err != nil {
		return nil, a, "", false, nil // the caller's own open says why
	}
	c, a, err = control.Attach(ctx, r.GitDir(), req)
	if errors.Is(err, control.ErrNoDaemon) {
		return nil, a, "", false, nil
	}
	if err != nil {
		return nil, a, "", true, fmt.Errorf("the daemon serving %s: %w", dir, err)
	}
	return c, a, r.GitDir(), true, nil
}

// attachMCP serves an MCP client on stdio through the daemon already
// serving dir. It returns false when no daemon answers (the caller serves
// dir itself).
func attachMCP(ctx context.Context, dir string) (bool, error) {
	c, _, _, attached, err := attach(ctx, dir, control.Request{Verb: control.MCP})
	if !attached || err != nil {
		return attached, err
	}
	defer c.Close()
	slog.Info("served by the daemon already serving the repository", "repo", dir)
	go func() {
		io.Copy(c, os.Stdin)
		if uc, ok := c.(*net.UnixConn); ok {
			uc.CloseWrite() // the client is done: the daemon ends the session
		}
	}()
	stop := context.AfterFunc(ctx, func() { c.Close() })
	defer stop()
	io.Copy(os.Stdout, c)
	return true, nil
}

// attachUI serves the web page of the daemon already serving dir on
// addr. It returns false when no daemon answers (the caller serves dir
// itself).
func attachUI(ctx context.Context, dir, addr string) (bool, error) {
	login, a, gitDir, attached, err := attach(ctx, dir, control.Request{Verb: control.UI})
	if !attached || err != nil {
		return attached, err
	}
	defer login.Close()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return true, err
	}
	defer ln.Close()
	if !httpapi.IsLoopback(ln.Addr()) {
		return true, fmt.Errorf("--http %s is not a loopback address: beside a running daemon the page is served on a loopback address only (or use mindmount serve --http)", addr)
	}
	if _, err := io.WriteString(login, ln.Addr().String()); err != nil {
		return true, err
	}
	url := make([]byte, 512)
	n, err := login.Read(url)
	if err != nil {
		return true, fmt.Errorf("the daemon serving %s: %w", dir, err)
	}
	fmt.Fprint(stdout, string(url[:n]))
	slog.Info("the page is served by the daemon already serving the repository", "repo", dir)
	// The page lasts while the daemon does: its end ends this command.
	gone := make(chan struct{})
	go func() {
		io.Copy(io.Discard, login)
		close(gone)
		ln.Close()
	}()
	stop := context.AfterFunc(ctx, func() { ln.Close() })
	defer stop()
	var wg sync.WaitGroup
	defer wg.Wait()
	for {
		tc, err := ln.Accept()
		if err != nil {
			select {
			case <-gone:
				if ctx.Err() == nil {
					return true, fmt.Errorf("the daemon serving %s stopped", dir)
				}
			default:
			}
			return true, nil
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer tc.Close()
			uc, _, err := control.Attach(ctx, gitDir, control.Request{Verb: control.UIHTTP, Session: a.Session})
			if err != nil {
				io.WriteString(tc, "HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain\r\nConnection: close\r\n\r\nthe daemon serving this repository is gone\n")
				return
			}
			defer uc.Close()
			splice(ctx, tc, uc)
		}()
	}
}

// splice copies a to b and b to a until both directions ended or ctx did.
func splice(ctx context.Context, a, b net.Conn) {
	stop := context.AfterFunc(ctx, func() { a.Close(); b.Close() })
	defer stop()
	var wg sync.WaitGroup
	half := func(dst, src net.Conn) {
		defer wg.Done()
		io.Copy(dst, src)
		if cw, ok := dst.(interface{ CloseWrite() error }); ok {
			cw.CloseWrite()
		} else {
			dst.Close()
		}
	}
	wg.Add(2)
	go half(a, b)
	go half(b, a)
	wg.Wait()
}
