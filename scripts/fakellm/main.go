// Command fakellm serves consolidate/llmtest's fake model on 127.0.0.1 for
// scripts (scripts/soak.sh, demos): every extraction finds one new fact
// about the user, every decision adds it. It prints the base URL on its
// first line and serves until it is killed.
//
//	go run ./scripts/fakellm    # prints e.g. http://127.0.0.1:40123
//	OLLAMA_HOST=that ENGRAM_LLM=ollama ENGRAM_MODEL=fake engram mount ...
package main

import (
	"fmt"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"

	"github.com/engram-dev/engram/consolidate/llmtest"
)

// cleanup satisfies llmtest.New's test hook outside a test.
type cleanup struct{ fns []func() }

func (c *cleanup) Cleanup(fn func()) { c.fns = append(c.fns, fn) }

func main() {
	var c cleanup
	srv := llmtest.New(&c)
	var n atomic.Int64
	srv.Handle(func(call llmtest.Call) llmtest.Reply {
		switch call.Kind {
		case llmtest.KindExtract:
			i := n.Add(1)
			return llmtest.Reply{Content: fmt.Sprintf(`{"facts":[{"kind":"user","slug":"soak-fact-%d","description":"Soak fact number %d","fact":"You told the soak test fact %d.","episode":"Said during the soak."}]}`, i, i, i)}
		case llmtest.KindDecide:
			return llmtest.Reply{Content: `{"decisions":[{"fact":0,"action":"ADD","target":"","description":"","text":""}]}`}
		}
		return llmtest.Reply{Content: "ok"}
	})
	fmt.Println(srv.URL)
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	<-sig
	for _, fn := range c.fns {
		fn()
	}
}
