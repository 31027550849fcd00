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
func stdioTransport() mcp.Transport {
	out := &lockedWriter{w: os.Stdout}
	return &mcp.IOTransport{Reader: &jsonLines{r: bufio.NewReader(os.Stdin), c: os.Stdin, errs: out}, Writer: out}
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
}

func (j *jsonLines) Read(p []byte) (int, error) {
	for len(j.pending) == 0 {
		line, err := j.r.ReadBytes('\n')
		if t := bytes.TrimSpace(line); len(t) > 0 {
			if (t[0] == '{' || t[0] == '[') && json.Valid(t) {
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

func (j *jsonLines) Close() error { return j.c.Close() }

// lockedWriter serialises whole writes: the server's messages and the
// parse errors never interleave within a line.
type lockedWriter struct {
	mu sync.Mutex
	w  io.WriteCloser
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func (l *lockedWriter) Close() error { return l.w.Close() }
