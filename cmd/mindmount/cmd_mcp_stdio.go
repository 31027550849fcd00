package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// stdioTransport is MCP over stdin and stdout, one JSON-RPC message per
// line, where a line that is not a JSON-RPC 2.0 message gets JSON-RPC's
// error (-32700 not JSON, -32600 not a valid request) and the server
// keeps serving: the SDK's own stdio transport ends the session on the
// first bad line, so one stray print of a client's took the memory away
// for the rest of its session. A line is at most maxLine bytes; a longer
// one is refused and skipped without being held in memory whole.
//
// Calls are answered one after the other, in the order they came: the
// SDK handles calls concurrently, so a client that sent "create" and then
// "view" without waiting could see the view answered before the create
// took effect. The next call is read only once every earlier call has its
// answer (callGate); the server never calls the client back, so nothing
// it waits for is held behind the gate.
func stdioTransport(maxLine int) mcp.Transport { return lineTransport(os.Stdin, os.Stdout, maxLine) }

// lineTransport is stdioTransport over in and out: a client attached
// through a daemon's control socket is served the same way.
func lineTransport(in io.ReadCloser, out io.WriteCloser, maxLine int) mcp.Transport {
	gate := newCallGate()
	w := &lockedWriter{w: out, gate: gate}
	return &mcp.IOTransport{Reader: newJSONLines(in, w, gate, maxLine), Writer: w}
}

// defaultMaxLine bounds one line of mindmount mcp's input (--max-line).
const defaultMaxLine = 8 << 20

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

// rpcError is JSON-RPC's error answer with id (JSON; "null" when the
// message's own id is missing or unusable).
func rpcError(id string, code int, msg string) []byte {
	m, _ := json.Marshal(msg)
	return []byte(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"error":{"code":%d,"message":%s}}`+"\n", id, code, m))
}

// The errors of JSON-RPC 2.0 this reader answers itself.
const (
	codeParse   = -32700
	codeInvalid = -32600
)

// usableID reports whether raw is an id a request may carry: a string,
// or an integer that fits in 64 bits (1.5 is not 1, and null, true or an
// object name nothing to answer).
func usableID(raw json.RawMessage) bool {
	if len(raw) > 0 && raw[0] == '"' {
		var s string
		return json.Unmarshal(raw, &s) == nil
	}
	_, err := strconv.ParseInt(string(raw), 10, 64)
	return err == nil
}

// checkMessage returns the error answer for a line (without blanks
// around it) that is not one valid JSON-RPC 2.0 message, or nil when it
// is one: a request or notification (a string method; an id, when
// present, usable) or a response (a usable id, a result or an error).
// Batches are not part of MCP and are refused.
func checkMessage(t []byte) []byte {
	if !json.Valid(t) {
		return rpcError("null", codeParse, "Parse error: the line is not JSON")
	}
	var m map[string]json.RawMessage
	if t[0] != '{' || json.Unmarshal(t, &m) != nil {
		return rpcError("null", codeInvalid, "Invalid Request: send one JSON-RPC 2.0 object per line")
	}
	rawID, hasID := m["id"]
	id := "null"
	if hasID && usableID(rawID) {
		id = string(rawID)
	}
	switch {
	case string(m["jsonrpc"]) != `"2.0"`:
		return rpcError(id, codeInvalid, `Invalid Request: "jsonrpc" must be "2.0"`)
	case hasID && id == "null":
		return rpcError(id, codeInvalid, "Invalid Request: an id is a string or an integer")
	}
	if method, ok := m["method"]; ok {
		var name string
		if json.Unmarshal(method, &name) != nil || name == "" {
			return rpcError(id, codeInvalid, `Invalid Request: "method" must be a non-empty string`)
		}
		return nil
	}
	_, result := m["result"]
	_, failed := m["error"]
	if !hasID || result == failed {
		return rpcError(id, codeInvalid, "Invalid Request: neither a request (a method) nor a response (an id and a result or an error)")
	}
	return nil
}

// jsonLines passes on the lines of r that are JSON-RPC 2.0 messages and
// answers every other non-blank line (checkMessage) on errs.
type jsonLines struct {
	r       *bufio.Reader
	c       io.Closer
	errs    io.Writer
	pending []byte
	gate    *callGate
	max     int // the longest line passed on, in bytes
}

func newJSONLines(r io.ReadCloser, errs io.Writer, gate *callGate, max int) *jsonLines {
	if max <= 0 {
		max = defaultMaxLine
	}
	return &jsonLines{r: bufio.NewReaderSize(r, 64<<10), c: r, errs: errs, gate: gate, max: max}
}

// readLine returns the next line; a line longer than max is read to its
// end and dropped (long true), never held whole.
func (j *jsonLines) readLine() (line []byte, long bool, err error) {
	for {
		frag, err := j.r.ReadSlice('\n')
		if !long {
			if len(line)+len(frag) > j.max+1 { // +1: the newline
				line, long = nil, true
			} else {
				line = append(line, frag...)
			}
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			return line, long, err
		}
	}
}

// answer writes a reply of the reader's own: it answers no call of the
// server's, so the call gate is not told of it.
func (j *jsonLines) answer(b []byte) error {
	if lw, ok := j.errs.(*lockedWriter); ok {
		return lw.writeOwn(b)
	}
	_, err := j.errs.Write(b)
	return err
}

func (j *jsonLines) Read(p []byte) (int, error) {
	for len(j.pending) == 0 {
		line, long, err := j.readLine()
		if long {
			if werr := j.answer(rpcError("null", codeInvalid, fmt.Sprintf("Invalid Request: the line is longer than %d bytes, the most this server reads; it was skipped", j.max))); werr != nil {
				return 0, werr
			}
		} else if t := bytes.TrimSpace(line); len(t) > 0 {
			if reply := checkMessage(t); reply != nil {
				if werr := j.answer(reply); werr != nil {
					return 0, werr
				}
			} else {
				if call, _ := rpcKind(t); call && j.gate != nil {
					j.gate.enter()
				}
				j.pending = line
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

// writeOwn writes a reply that answers none of the server's calls.
func (l *lockedWriter) writeOwn(p []byte) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	_, err := l.w.Write(p)
	return err
}

func (l *lockedWriter) Close() error { return l.w.Close() }
