package main

import (
	"cmp"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/mindmount/mindmount/consolidate/llm"
)

// providerOptions are the model settings a command's flags give; empty
// fields fall back to the environment, then to llm's defaults.
type providerOptions struct {
	LLM        string        // --llm: ollama, openai or anthropic
	Model      string        // --model: chat model
	EmbedModel string        // embedding model; defaults per provider
	Timeout    time.Duration // --timeout: per call
}

// providerEnvHelp is the one description of the model settings, shared by
// the help texts of the commands that reach a model.
const providerEnvHelp = `The model is reached through Ollama (MINDMOUNT_LLM=ollama, the default;
OLLAMA_HOST, else http://127.0.0.1:11434; model llama3.2), any
OpenAI-compatible server (MINDMOUNT_LLM=openai; OPENAI_BASE_URL, else
https://api.openai.com/v1, and OPENAI_API_KEY; model gpt-4o-mini) or
Anthropic (MINDMOUNT_LLM=anthropic; ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL;
model claude-haiku-4-5). MINDMOUNT_MODEL names another chat model and
MINDMOUNT_LLM_TIMEOUT limits each call (default 5m). Embeddings (mindmount
reindex) use MINDMOUNT_EMBED_MODEL, else the chat model on Ollama and
text-embedding-3-small on OpenAI; Anthropic has no embedding API.`

// providerFromEnv builds the provider the environment asks for.
func providerFromEnv() (llm.Provider, error) { return newProvider(providerOptions{}) }

// newProvider builds the provider flags and environment ask for. The
// environment is read here and nowhere below cmd. An error names where a
// bad value came from (the flag or the variable).
func newProvider(o providerOptions) (llm.Provider, error) {
	name, from := o.LLM, "--llm"
	if name == "" {
		name, from = cmp.Or(os.Getenv("MINDMOUNT_LLM"), "ollama"), "MINDMOUNT_LLM"
	}
	model := cmp.Or(o.Model, os.Getenv("MINDMOUNT_MODEL"))
	embed := cmp.Or(o.EmbedModel, os.Getenv("MINDMOUNT_EMBED_MODEL"))
	timeout := o.Timeout
	if timeout == 0 {
		if s := os.Getenv("MINDMOUNT_LLM_TIMEOUT"); s != "" {
			d, err := time.ParseDuration(s)
			if err != nil || d <= 0 {
				return nil, fmt.Errorf("MINDMOUNT_LLM_TIMEOUT=%q is not a positive duration like 90s or 5m", s)
			}
			timeout = d
		}
	}
	switch strings.ToLower(name) {
	case "ollama":
		p := llm.NewOllama(os.Getenv("OLLAMA_HOST"), cmp.Or(model, llm.DefaultOllamaModel))
		p.EmbedModel = cmp.Or(embed, p.Model())
		if timeout > 0 {
			p.Timeout = timeout
		}
		return p, nil
	case "openai":
		p := llm.NewOpenAI(os.Getenv("OPENAI_BASE_URL"), os.Getenv("OPENAI_API_KEY"), cmp.Or(model, llm.DefaultOpenAIModel))
		p.EmbedModel = cmp.Or(embed, llm.DefaultOpenAIEmbed)
		if timeout > 0 {
			p.Timeout = timeout
		}
		return p, nil
	case "anthropic":
		p := llm.NewAnthropic(os.Getenv("ANTHROPIC_BASE_URL"), os.Getenv("ANTHROPIC_API_KEY"), cmp.Or(model, llm.DefaultAnthropicModel), 2)
		if timeout > 0 {
			p.Timeout = timeout
		}
		return p, nil
	}
	return nil, fmt.Errorf("%s %q: want ollama, openai or anthropic", from, name)
}

// embedModel names the embedding model for the vector cache key: vectors
// of different models must never mix.
func embedModel(p llm.Provider) string {
	switch p := p.(type) {
	case *llm.Ollama:
		return "ollama/" + p.EmbedModel
	case *llm.OpenAI:
		return "openai/" + p.EmbedModel
	}
	return p.Name() + "/" + p.Model()
}

// noModelHint says how to point mindmount at a model server, for the provider
// that did not answer.
func noModelHint(p llm.Provider) string {
	switch p.Name() {
	case "openai":
		return "is the server running? set OPENAI_BASE_URL (and OPENAI_API_KEY); " + llm.NoModelHelp
	case "anthropic":
		return "is the network up? set ANTHROPIC_BASE_URL (and ANTHROPIC_API_KEY); " + llm.NoModelHelp
	}
	return "is the server running? set OLLAMA_HOST; " + llm.NoModelHelp
}
