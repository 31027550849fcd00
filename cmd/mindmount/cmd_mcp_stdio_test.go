package main

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"
	"testing"
)

// TestStdioLines: every line that is not one valid JSON-RPC 2.0 message
// is answered with the matching error — id null when its own id is
// unusable — and never reaches the server, which reads on; an overlong
// line is refused and skipped; valid messages pass on unchanged.
func TestStdioLines(t *testing.T) {
	const max = 256
	long := `{"jsonrpc":"2.0","id":9,"method":"tools/list","params":{"x":"` + strings.Repeat("a", 2*max) + `"}}`
	cases := []struct {
		name, line string
		code       int    // 0: passed on to the server
		id         string // the error's id, as JSON
	}{
		{"not JSON", "this is not json", -32700, "null"},
		{"id true", `{"jsonrpc":"2.0","id":true,"method":"tools/list"}`, -32600, "null"},
		{"id object", `{"jsonrpc":"2.0","id":{},"method":"tools/list"}`, -32600, "null"},
		{"id null", `{"jsonrpc":"2.0","id":null,"method":"tools/list"}`, -32600, "null"},
		{"id 1.5", `{"jsonrpc":"2.0","id":1.5,"method":"tools/list"}`, -32600, "null"},
		{"id 1e3", `{"jsonrpc":"2.0","id":1e3,"method":"tools/list"}`, -32600, "null"},
		{"id past int64", `{"jsonrpc":"2.0","id":123456789012345678901234567890,"method":"tools/list"}`, -32600, "null"},
		{"jsonrpc 1.0", `{"jsonrpc":"1.0","id":3,"method":"tools/list"}`, -32600, "3"},
		{"no jsonrpc", `{"id":"a","method":"tools/list"}`, -32600, `"a"`},
		{"method not a string", `{"jsonrpc":"2.0","id":4,"method":7}`, -32600, "4"},
		{"neither request nor response", `{"jsonrpc":"2.0","id":5}`, -32600, "5"},
		{"a batch", `[{"jsonrpc":"2.0","id":6,"method":"tools/list"}]`, -32600, "null"},
		{"a string", `"tools/list"`, -32600, "null"},
		{"overlong", long, -32600, "null"},
		{"request", `{"jsonrpc":"2.0","id":7,"method":"tools/list"}`, 0, ""},
		{"string id", `{"jsonrpc":"2.0","id":"x-1","method":"tools/list"}`, 0, ""},
		{"notification", `{"jsonrpc":"2.0","method":"notifications/initialized"}`, 0, ""},
		{"response", `{"jsonrpc":"2.0","id":8,"result":{}}`, 0, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var errs bytes.Buffer
			next := `{"jsonrpc":"2.0","id":"next","method":"ping"}`
			j := newJSONLines(io.NopCloser(strings.NewReader(tc.line+"\n"+next+"\n")), &errs, nil, max)
			passed, err := io.ReadAll(j)
			if err != nil {
				t.Fatal(err)
			}
			want := next + "\n"
			if tc.code == 0 {
				want = tc.line + "\n" + want
			}
			if string(passed) != want {
				t.Errorf("passed on %q, want %q", passed, want)
			}
			if tc.code == 0 {
				if errs.Len() != 0 {
					t.Errorf("answered %q", errs.String())
				}
				return
			}
			var reply struct {
				JSONRPC string          `json:"jsonrpc"`
				ID      json.RawMessage `json:"id"`
				Error   struct{ Code int }
			}
			if strings.Count(errs.String(), "\n") != 1 || json.Unmarshal(errs.Bytes(), &reply) != nil {
				t.Fatalf("answer %q", errs.String())
			}
			if reply.JSONRPC != "2.0" || reply.Error.Code != tc.code || string(reply.ID) != tc.id {
				t.Errorf("answer %s, want code %d id %s", errs.String(), tc.code, tc.id)
			}
		})
	}
}

// TestStdioLongLineBounded: a line many times the limit is skipped while
// the reader holds no more than about the limit of it.
func TestStdioLongLineBounded(t *testing.T) {
	const max = 1 << 10
	var errs bytes.Buffer
	huge := io.MultiReader(strings.NewReader(`{"x":"`), io.LimitReader(zeros{}, 64<<20), strings.NewReader("\"}\n"+`{"jsonrpc":"2.0","id":1,"method":"ping"}`+"\n"))
	j := newJSONLines(io.NopCloser(huge), &errs, nil, max)
	line, long, err := j.readLine()
	if err != nil || !long || cap(line) > 2*max {
		t.Fatalf("long line: %d bytes held (cap %d), long %v, %v", len(line), cap(line), long, err)
	}
	passed, _ := io.ReadAll(j)
	if !strings.Contains(string(passed), `"id":1`) {
		t.Fatalf("the line after the long one: %q", passed)
	}
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'a'
	}
	return len(p), nil
}
