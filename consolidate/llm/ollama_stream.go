package llm

import (
	"context"
	"errors"
	"fmt"

	"github.com/ollama/ollama/api"
)

var _ Streamer = (*Ollama)(nil)

// Stream sends msgs to /api/chat with streaming on and hands each piece of
// the answer to onDelta.
func (o *Ollama) Stream(ctx context.Context, msgs []Message, onDelta func(string) error) error {
	ctx, cancel := callContext(ctx, o.Timeout)
	defer cancel()
	stream := true
	am := make([]api.Message, len(msgs))
	for i, m := range msgs {
		am[i] = api.Message{Role: m.Role, Content: m.Content}
	}
	sink := &deltaSink{fn: onDelta}
	var sinkErr error
	done := false
	err := o.client.Chat(ctx, &api.ChatRequest{Model: o.model, Messages: am, Stream: &stream, Options: o.chatOptions()},
		func(r api.ChatResponse) error {
			if err := sink.send(r.Message.Content); err != nil {
				sinkErr = err
				return err
			}
			done = done || r.Done
			return nil
		})
	if sinkErr != nil {
		if errors.Is(sinkErr, errTooLong) {
			return fmt.Errorf("ollama %s: %w", o.model, sinkErr)
		}
		return sinkErr
	}
	if err != nil {
		return o.wrap(ctx, err)
	}
	if !done {
		return fmt.Errorf("ollama %s: %w", o.model, ErrStreamCut)
	}
	return nil
}

// chatOptions are the options of a conversation: the model's own
// temperature (not the 0 that consolidation pins), our context size.
func (o *Ollama) chatOptions() map[string]any {
	opts := map[string]any{}
	for k, v := range o.Options {
		if k != "temperature" {
			opts[k] = v
		}
	}
	return opts
}
