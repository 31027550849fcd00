package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"os"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// stdioTransport is MCP over stdin and stdout, one JSON-RPC message per
// line, where a line that is not JSON gets a parse error (-32700), as
// JSON-RPC asks, and the server keeps serving: the SDK's own stdio
// transport ends the session on the first bad line, so one stray print of
// a client's took the memory away for the rest of its session.
//
// Calls are answered one after the other, in the order they came: the
// SDK handles calls concurrently, so a client that sent "create" and then
// "view" without waiting could see the view answered before the create
// took effect. The next call is read only once every earlier call has its
// answer (callGate); the server never calls the client back, so nothing
// it waits for is held behind the gate.
func stdioTransport() mcp.Transport { return lineTransport(os.Stdin, os.Stdout) }

// lineTransport is stdioTransport over in and out: a client attached
// through a daemon's control socket is served the same way.
func lineTransport(in io.ReadCloser, out io.WriteCloser) mcp.Transport {
	gate := newCallGate()
	w := &lockedWriter{w: out, gate: gate}
	return &mcp.IOTransport{Reader: &jsonLines{r: bufio.NewReader(in), c: in, errs: w, gate: gate}, Writer: w}
}

// callGate counts the client's calls not answered yet.
type callGate struct {
	mu     sync.Mutex
	cond   *sync.Cond
	open   int
	closed bool // the session ended: nothing waits any more
}

func newCallGate() *callGate {
	g := &callGate{}
	g.cond = sync.NewCond(&g.mu)
	return g
}

// enter waits until every earlier call is answered, then counts one more.
func (g *callGate) enter() {
	g.mu.Lock()
	for g.open > 0 && !g.closed {
		g.cond.Wait()
	}
	g.open++
	g.mu.Unlock()
}

// answered counts one call answered.
func (g *callGate) answered() {
	g.mu.Lock()
	if g.open > 0 {
		g.open--
	}
	g.cond.Broadcast()
	g.mu.Unlock()
}

// close releases a reader waiting in enter.
func (g *callGate) close() {
	g.mu.Lock()
	g.closed = true
	g.cond.Broadcast()
	g.mu.Unlock()
}

// rpcKind says whether a JSON-RPC message is a call (a method and an id)
// or an answer (an id and no method); batches and notifications are
// neither.
func rpcKind(line []byte) (call, answer bool) {
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	if json.Unmarshal(line, &m) != nil || len(m.ID) == 0 || string(m.ID) == "null" {
		return false, false
	}
	return m.Method != "", m.Method == ""
}

// parseError is JSON-RPC's answer to a message that is not JSON.
const parseError = `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error: the line is not a JSON-RPC message"}}` + "\n"

// jsonLines passes on the lines of r that are JSON objects or arrays and
// answers every other non-blank line with parseError on errs.
type jsonLines struct {
	r       *bufio.Reader
	c       io.Closer
	errs    io.Writer
	pending []byte
	gate    *callGate
}

func (j *jsonLines) Read(p []byte) (int, error) {
	for len(j.pending) == 0 {
		line, err := j.r.ReadBytes('\n')
		if t := bytes.TrimSpace(line); len(t) > 0 {
			if (t[0] == '{' || t[0] == '[') && json.Valid(t) {
				if call, _ := rpcKind(t); call && j.gate != nil {
					j.gate.enter()
				}
				j.pending = line
			} else if _, werr := io.WriteString(j.errs, parseError); werr != nil {
				return 0, werr
			}
		}
		if err != nil {
			if len(j.pending) == 0 {
				return 0, err
			}
			break
		}
	}
	n := copy(p, j.pending)
	j.pending = j.pending[n:]
	return n, nil
}

func (j *jsonLines) Close() error {
	if j.gate != nil {
		j.gate.close()
	}
	return j.c.Close()
}

// lockedWriter serialises whole writes: the server's messages and the
// parse errors never interleave within a line.
type lockedWriter struct {
	mu   sync.Mutex
	w    io.WriteCloser
	gate *callGate // told of every answer written
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	n, err := l.w.Write(p)
	if _, answer := rpcKind(bytes.TrimSpace(p)); answer && l.gate != nil {
		l.gate.answered()
	}
	return n, err
}

func (l *lockedWriter) Close() error { return l.w.Close() }
