// Command fakellm serves consolidate/llmtest's fake model on 127.0.0.1 for
// scripts. By default (scripts/soak.sh) every extraction finds one new fact
// about the user and every decision adds it. With -script FILE it gives the
// answers written in FILE instead (scripts/demo.sh): a JSON object whose
// "extract" and "decide" members are the model's answers to every
// extraction and every decision, in consolidate's schema. With -delay D
// every answer waits D first (a hosted model's latency); it speaks the
// Ollama, OpenAI (OPENAI_BASE_URL=URL/v1) and Anthropic wires. It prints
// the base URL on its first line and serves until it is killed.
//
//	go run ./scripts/fakellm    # prints e.g. http://127.0.0.1:40123
//	OLLAMA_HOST=that MINDMOUNT_LLM=ollama MINDMOUNT_MODEL=fake mindmount mount ...
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"

	"github.com/mindmount/mindmount/consolidate/llmtest"
)

// cleanup satisfies llmtest.New's test hook outside a test.
type cleanup struct{ fns []func() }

func (c *cleanup) Cleanup(fn func()) { c.fns = append(c.fns, fn) }

// script is the -script file: the answer to each kind of call.
type script struct {
	Extract json.RawMessage `json:"extract"`
	Decide  json.RawMessage `json:"decide"`
}

func main() {
	scriptFile := flag.String("script", "", "answer every extraction and decision with the JSON in `FILE` ({\"extract\": …, \"decide\": …})")
	delay := flag.Duration("delay", 0, "answer every call after `D` (a real model's latency: -delay 250ms)")
	flag.Parse()
	handler := soak()
	if *scriptFile != "" {
		h, err := scripted(*scriptFile)
		if err != nil {
			fmt.Fprintln(os.Stderr, "fakellm:", err)
			os.Exit(2)
		}
		handler = h
	}
	if *delay > 0 {
		inner := handler
		handler = func(call llmtest.Call) llmtest.Reply {
			r := inner(call)
			r.Delay = *delay
			return r
		}
	}
	var c cleanup
	srv := llmtest.New(&c)
	srv.Handle(handler)
	fmt.Println(srv.URL)
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	<-sig
	for _, fn := range c.fns {
		fn()
	}
}

// soak finds one new fact per extraction and adds it.
func soak() func(llmtest.Call) llmtest.Reply {
	var n atomic.Int64
	return func(call llmtest.Call) llmtest.Reply {
		switch call.Kind {
		case llmtest.KindExtract:
			i := n.Add(1)
			return llmtest.Reply{Content: fmt.Sprintf(`{"facts":[{"kind":"user","slug":"soak-fact-%d","description":"Soak fact number %d","fact":"You told the soak test fact %d.","episode":"Said during the soak."}]}`, i, i, i)}
		case llmtest.KindDecide:
			return llmtest.Reply{Content: `{"decisions":[{"fact":0,"action":"ADD","target":"","description":"","text":""}]}`}
		}
		return llmtest.Reply{Content: "ok"}
	}
}

// scripted answers with the file's fixed answers.
func scripted(file string) (func(llmtest.Call) llmtest.Reply, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var s script
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("%s: %v", file, err)
	}
	if len(s.Extract) == 0 || len(s.Decide) == 0 {
		return nil, fmt.Errorf(`%s: want a JSON object with "extract" and "decide" answers`, file)
	}
	return func(call llmtest.Call) llmtest.Reply {
		switch call.Kind {
		case llmtest.KindExtract:
			return llmtest.Reply{Content: string(s.Extract)}
		case llmtest.KindDecide:
			return llmtest.Reply{Content: string(s.Decide)}
		}
		return llmtest.Reply{Content: "ok"}
	}, nil
}
