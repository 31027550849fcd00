package main

import (
	"strings"
	"testing"
	"time"

	"github.com/mindmount/mindmount/consolidate/llm"
)

func TestNewProviderFromEnv(t *testing.T) {
	t.Setenv("MINDMOUNT_LLM", "")
	t.Setenv("MINDMOUNT_MODEL", "")
	t.Setenv("MINDMOUNT_EMBED_MODEL", "")
	t.Setenv("MINDMOUNT_LLM_TIMEOUT", "")
	t.Setenv("OLLAMA_HOST", "example.test:1234")
	p, err := providerFromEnv()
	if err != nil {
		t.Fatal(err)
	}
	if p.Name() != "ollama" || p.Model() != llm.DefaultOllamaModel || p.(llm.Endpoint).Endpoint() != "http://example.test:1234" {
		t.Fatalf("got %s %s %s", p.Name(), p.Model(), p.(llm.Endpoint).Endpoint())
	}
	if embedModel(p) != "ollama/"+llm.DefaultOllamaModel {
		t.Fatalf("embed model %s", embedModel(p))
	}
	t.Setenv("MINDMOUNT_LLM", "openai")
	t.Setenv("MINDMOUNT_MODEL", "m1")
	t.Setenv("OPENAI_BASE_URL", "http://localhost:1/v1/")
	t.Setenv("OPENAI_API_KEY", "sk-zzzzzzzzzzzzzzzzzzzzzzzz")
	t.Setenv("MINDMOUNT_LLM_TIMEOUT", "7s")
	p, err = providerFromEnv()
	if err != nil {
		t.Fatal(err)
	}
	o := p.(*llm.OpenAI)
	if o.Model() != "m1" || o.Endpoint() != "http://localhost:1/v1" || o.Timeout != 7*time.Second || o.EmbedModel != llm.DefaultOpenAIEmbed {
		t.Fatalf("got %s %s %s", o.Model(), o.Endpoint(), o.EmbedModel)
	}
	if h := noModelHint(p); strings.Contains(h, "OLLAMA_HOST") || !strings.Contains(h, "OPENAI_BASE_URL") {
		t.Fatalf("the openai hint points at ollama: %s", h)
	}
	t.Setenv("MINDMOUNT_LLM", "anthropic")
	t.Setenv("MINDMOUNT_MODEL", "")
	t.Setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:9/")
	t.Setenv("ANTHROPIC_API_KEY", "sk-ant-zzzzzzzzzzzzzzzzzzzz")
	p, err = providerFromEnv()
	if err != nil {
		t.Fatal(err)
	}
	if a := p.(*llm.Anthropic); a.Model() != llm.DefaultAnthropicModel || a.Endpoint() != "http://127.0.0.1:9" || a.Timeout != 7*time.Second {
		t.Fatalf("got %s %s", a.Model(), a.Endpoint())
	}
	if h := noModelHint(p); !strings.Contains(h, "ANTHROPIC_BASE_URL") {
		t.Fatalf("hint %s", h)
	}
	// Flags win over the environment.
	p, err = newProvider(providerOptions{LLM: "ollama", Model: "m2", Timeout: time.Second})
	if err != nil || p.Name() != "ollama" || p.Model() != "m2" || p.(*llm.Ollama).Timeout != time.Second {
		t.Fatalf("flags ignored: %v %v", p, err)
	}
	t.Setenv("MINDMOUNT_LLM", "bard")
	if _, err := providerFromEnv(); err == nil || !strings.Contains(err.Error(), `MINDMOUNT_LLM "bard"`) {
		t.Fatalf("unknown provider from the environment: %v", err)
	}
	// A bad --llm names the flag, not the variable.
	if _, err := newProvider(providerOptions{LLM: "bogus"}); err == nil || !strings.Contains(err.Error(), `--llm "bogus"`) {
		t.Fatalf("unknown provider from the flag: %v", err)
	}
	t.Setenv("MINDMOUNT_LLM", "ollama")
	t.Setenv("MINDMOUNT_LLM_TIMEOUT", "soon")
	if _, err := providerFromEnv(); err == nil {
		t.Fatal("bad timeout accepted")
	}
}
