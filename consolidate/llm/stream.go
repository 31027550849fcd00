package llm

import (
	"bufio"
	"context"
	"errors"
	"io"
	"strings"
)

// Message is one turn of a conversation. Role is "system", "user" or
// "assistant"; system messages go wherever the protocol wants them.
type Message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// Streamer streams a free-text chat answer through the provider's own
// streaming API. Stream calls onDelta with each piece of the answer as it
// arrives, in order, and returns once the model is done. An error from
// onDelta (the reader went away) stops the call and is returned as is.
// A stream that breaks off before the model said it was done is an error
// wrapping ErrStreamCut; what was delivered until then stays delivered.
type Streamer interface {
	Stream(ctx context.Context, msgs []Message, onDelta func(delta string) error) error
}

// ChatProvider is a Provider that also streams chat; all three of ours do.
type ChatProvider interface {
	Provider
	Streamer
}

// ErrStreamCut means the answer stream ended before the model's final
// event: the answer is incomplete.
var ErrStreamCut = errors.New("the answer stream ended before it was done")

// MaxStreamBytes bounds one streamed answer; a model that goes on longer
// is stopped there.
const MaxStreamBytes = 1 << 20

var errTooLong = errors.New("the answer exceeds the size limit")

// splitSystem returns the system messages joined, and the rest.
func splitSystem(msgs []Message) (string, []Message) {
	var sys []string
	var rest []Message
	for _, m := range msgs {
		if m.Role == "system" {
			sys = append(sys, m.Content)
			continue
		}
		rest = append(rest, m)
	}
	return strings.Join(sys, "\n\n"), rest
}

// sseData reads a server-sent event stream and calls fn with the data of
// each event (multi-line data joined by "\n") and its event name. It
// returns fn's error, or io.EOF's absence as nil at the end of the body.
func sseData(r io.Reader, fn func(event, data string) error) error {
	br := bufio.NewReaderSize(r, 64<<10)
	var event string
	var data []string
	for {
		line, err := br.ReadString('\n')
		if len(line) > MaxStreamBytes {
			return errTooLong
		}
		line = strings.TrimRight(line, "\r\n")
		switch {
		case line == "" && err == nil:
			if len(data) > 0 {
				if ferr := fn(event, strings.Join(data, "\n")); ferr != nil {
					return ferr
				}
			}
			event, data = "", nil
		case strings.HasPrefix(line, ":"): // a comment, for keep-alive
		default:
			field, value, _ := strings.Cut(line, ":")
			value = strings.TrimPrefix(value, " ")
			switch field {
			case "event":
				event = value
			case "data":
				data = append(data, value)
			}
		}
		if err == io.EOF {
			if len(data) > 0 {
				return fn(event, strings.Join(data, "\n"))
			}
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// deltaSink counts what a stream delivered and stops it at MaxStreamBytes.
type deltaSink struct {
	fn func(string) error
	n  int
}

func (d *deltaSink) send(s string) error {
	if s == "" {
		return nil
	}
	d.n += len(s)
	if d.n > MaxStreamBytes {
		return errTooLong
	}
	return d.fn(s)
}
