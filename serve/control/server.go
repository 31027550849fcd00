package control

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// Handler serves one verb. Its error reaches the asking command (kept to
// one line, its kind by name); ctx ends when the daemon stops or the
// asking command goes away.
type Handler func(ctx context.Context, req Request) (Answer, error)

// Server is a daemon's control socket. Handle may be called before or
// while it serves.
type Server struct {
	path string
	ln   *net.UnixListener
	log  *slog.Logger
	may  func(uid int) bool // the peers it answers
	// ready is when a verb not registered yet is not coming: the
	// services register theirs as they start, just after Listen.
	ready time.Time

	mu       sync.Mutex // guards handlers, streams and added
	handlers map[Verb]Handler
	streams  map[Verb]StreamHandler
	added    chan struct{} // closed (and replaced) by Handle
}

// StreamHandler serves a stream verb: it answers the request, and when it
// accepts (err nil) serve gets the connection, carrying the door's own
// protocol from then on, until serve returns or ctx ends (the connection
// is closed then).
type StreamHandler func(ctx context.Context, req Request) (a Answer, serve func(ctx context.Context, conn net.Conn), err error)

// maxRequest bounds a request line: a verb, a number and a one-line reason.
const maxRequest = 64 << 10

// requestWait bounds how long a connection may take to send its request.
const requestWait = 10 * time.Second

// startGrace is how long after Listen a request for a verb nobody
// registered waits for its handler: a service registers its verb as it
// starts, a moment after the socket opened.
const startGrace = 3 * time.Second

// Listen opens the control socket of the repository whose git directory
// is gitDir, replacing a stale one; it fails when another daemon answers
// there. The socket is made 0600, and only a peer whose uid is ours, the
// git directory owner's or root's is answered.
func Listen(gitDir string, log *slog.Logger) (*Server, error) {
	if log == nil {
		log = slog.Default()
	}
	p := socketPath(gitDir)
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return nil, err
	}
	if c, err := Dial(context.Background(), p); err == nil {
		c.Close()
		return nil, fmt.Errorf("another daemon answers on %s", p)
	}
	os.Remove(p) // a stale socket of a daemon that died
	ln, err := listen(p)
	if err != nil {
		return nil, err
	}
	// The peer check below is the rule; the mode keeps others from even
	// connecting where the file system honours it.
	if err := os.Chmod(p, 0o600); err != nil {
		ln.Close()
		return nil, err
	}
	owner := -1
	if fi, err := os.Stat(gitDir); err == nil {
		owner = fileOwner(fi)
	}
	self := os.Geteuid()
	may := func(uid int) bool { return uid == self || uid == owner || uid == 0 }
	return &Server{path: p, ln: ln, log: log, may: may, ready: time.Now().Add(startGrace), handlers: map[Verb]Handler{}, streams: map[Verb]StreamHandler{}, added: make(chan struct{})}, nil
}

// Handle makes h serve verb v.
func (s *Server) Handle(v Verb, h Handler) { s.register(func() { s.handlers[v] = h }) }

// HandleStream makes h serve the stream verb v.
func (s *Server) HandleStream(v Verb, h StreamHandler) { s.register(func() { s.streams[v] = h }) }

// register runs set under the lock and wakes the requests waiting for a
// handler.
func (s *Server) register(set func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	set()
	close(s.added)
	s.added = make(chan struct{})
}

// handler returns v's handler or stream handler, waiting for one until s
// is ready.
func (s *Server) handler(ctx context.Context, v Verb) (Handler, StreamHandler) {
	deadline := time.NewTimer(time.Until(s.ready))
	defer deadline.Stop()
	for {
		s.mu.Lock()
		h, sh, added := s.handlers[v], s.streams[v], s.added
		s.mu.Unlock()
		if h != nil || sh != nil {
			return h, sh
		}
		select {
		case <-added:
		case <-deadline.C:
			return nil, nil
		case <-ctx.Done():
			return nil, nil
		}
	}
}

// Serve answers requests until ctx ends, then closes the socket, removes
// its file and waits for the requests under way to return.
func (s *Server) Serve(ctx context.Context) {
	var wg sync.WaitGroup
	stop := context.AfterFunc(ctx, func() { s.ln.Close() })
	defer stop()
	defer wg.Wait()
	defer os.Remove(s.path)
	defer s.ln.Close()
	for {
		c, err := s.ln.AcceptUnix()
		if err != nil {
			if ctx.Err() == nil && !errors.Is(err, net.ErrClosed) {
				s.log.Warn("control socket stopped", "err", err)
			}
			return
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.answer(ctx, c)
		}()
	}
}

// answer serves one connection: one request, one answer.
func (s *Server) answer(ctx context.Context, c *net.UnixConn) {
	defer c.Close()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(ctx, func() { c.Close() })
	defer stop()
	enc := json.NewEncoder(c)
	reply := func(a Answer, err error) {
		if err != nil {
			a.Error, a.Kind = err.Error(), kindOf(err)
		}
		if werr := enc.Encode(a); werr != nil && ctx.Err() == nil {
			s.log.Debug("control answer not delivered", "err", werr)
		}
	}
	if uid, err := peerUID(c); err != nil || !s.may(uid) {
		s.log.Warn("control request refused", "uid", uid, "err", err)
		reply(Answer{}, fmt.Errorf("%w (uid %d)", ErrRefused, uid))
		return
	}
	c.SetReadDeadline(time.Now().Add(requestWait))
	limit := &io.LimitedReader{R: c, N: maxRequest}
	rd := bufio.NewReader(limit)
	line, err := rd.ReadBytes('\n')
	if err != nil {
		return // nothing or too much was sent: nobody to answer
	}
	var req Request
	if err := json.Unmarshal(line, &req); err != nil {
		reply(Answer{}, fmt.Errorf("not a request: %v", err))
		return
	}
	c.SetReadDeadline(time.Time{})
	h, sh := s.handler(ctx, req.Verb)
	if sh != nil {
		a, serve, err := sh(ctx, req)
		reply(a, err)
		if err == nil && serve != nil {
			limit.N = math.MaxInt64 // the door's protocol bounds its own messages
			serve(ctx, &streamConn{UnixConn: c, r: rd})
		}
		return
	}
	// The asking command gone (Ctrl-C) ends the work it asked for.
	go func() {
		if _, err := rd.ReadByte(); err != nil {
			cancel()
		}
	}()
	if h == nil {
		if ctx.Err() != nil {
			reply(Answer{}, ErrStopping)
			return
		}
		reply(Answer{}, fmt.Errorf("%w: %q", ErrNotServed, req.Verb))
		return
	}
	a, err := h(ctx, req)
	if err != nil && ctx.Err() != nil && errors.Is(err, context.Canceled) {
		err = ErrStopping
	}
	reply(a, err)
}

// streamConn is a stream's connection: what the request's reader already
// buffered is read first.
type streamConn struct {
	*net.UnixConn
	r io.Reader
}

func (c *streamConn) Read(p []byte) (int, error) { return c.r.Read(p) }
