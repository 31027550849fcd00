package llm

import (
	"strings"
	"testing"
)

// FuzzSSE: the event-stream reader never panics, and every event it
// reports came from a data field of the input.
func FuzzSSE(f *testing.F) {
	f.Add("data: {\"a\":1}\n\ndata: [DONE]\n\n")
	f.Add("event: content_block_delta\ndata: {\"type\":\"x\"}\n\n: keep-alive\n\nevent: ping\ndata: {}\n")
	f.Add("data: a\r\ndata: b\r\n\r\n")
	f.Add("data")
	f.Fuzz(func(t *testing.T, in string) {
		n := 0
		err := sseData(strings.NewReader(in), func(event, data string) error {
			n++
			if !strings.Contains(in, "data") {
				t.Fatalf("event %q %q from input without data", event, data)
			}
			return nil
		})
		if err != nil && err != errTooLong {
			t.Fatalf("err %v", err)
		}
		if n > strings.Count(in, "data") {
			t.Fatalf("%d events from %d data fields", n, strings.Count(in, "data"))
		}
	})
}
