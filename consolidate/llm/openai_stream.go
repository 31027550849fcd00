package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/mindmount/mindmount/memgraph"
)

var _ Streamer = (*OpenAI)(nil)

type oaStreamRequest struct {
	Model    string      `json:"model"`
	Messages []oaMessage `json:"messages"`
	Stream   bool        `json:"stream"`
}

// Stream asks /chat/completions with stream true and reads the server-sent
// chunks until "data: [DONE]".
func (o *OpenAI) Stream(ctx context.Context, msgs []Message, onDelta func(string) error) error {
	ctx, cancel := callContext(ctx, o.Timeout)
	defer cancel()
	body := oaStreamRequest{Model: o.model, Stream: true, Messages: make([]oaMessage, len(msgs))}
	for i, m := range msgs {
		body.Messages[i] = oaMessage{Role: m.Role, Content: m.Content}
	}
	resp, err := o.send(ctx, http.MethodPost, "/chat/completions", body)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	sink := &deltaSink{fn: onDelta}
	var sinkErr error
	done := false
	err = sseData(resp.Body, func(_, data string) error {
		if data == "[DONE]" {
			done = true
			return errStop
		}
		var chunk struct {
			Choices []struct {
				Delta struct {
					Content string `json:"content"`
				} `json:"delta"`
				FinishReason *string `json:"finish_reason"`
			} `json:"choices"`
			Error *struct {
				Message string `json:"message"`
			} `json:"error"`
		}
		if err := json.Unmarshal([]byte(data), &chunk); err != nil {
			return fmt.Errorf("a stream chunk is not JSON: %v", memgraph.ClipLine(err.Error(), 120))
		}
		if chunk.Error != nil {
			return fmt.Errorf("the server reported: %s", memgraph.ErrorLine(o.scrub(chunk.Error.Message)))
		}
		for _, c := range chunk.Choices {
			if err := sink.send(c.Delta.Content); err != nil {
				sinkErr = err
				return err
			}
		}
		return nil
	})
	if sinkErr != nil && !errors.Is(sinkErr, errTooLong) {
		return sinkErr
	}
	if err != nil && !errors.Is(err, errStop) {
		return o.scrubErr(wrapCallError("openai", o.Endpoint(), ctx, err))
	}
	if !done {
		return fmt.Errorf("openai %s: %w", o.model, ErrStreamCut)
	}
	return nil
}

// errStop ends an event stream early without being an error.
var errStop = errors.New("stop")
