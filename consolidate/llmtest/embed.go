package llmtest

import (
	"encoding/json"
	"hash/fnv"
	"io"
	"math"
	"net/http"
	"strings"
)

// HashEmbed is a deterministic bag-of-words embedding: texts sharing words
// get close vectors, which is enough to test vector plumbing and fusion.
func HashEmbed(text string) []float32 {
	const dim = 64
	v := make([]float32, dim)
	for _, w := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9')
	}) {
		h := fnv.New32a()
		h.Write([]byte(w))
		v[h.Sum32()%dim]++
	}
	var n float64
	for _, x := range v {
		n += float64(x * x)
	}
	if n > 0 {
		n = math.Sqrt(n)
		for i := range v {
			v[i] = float32(float64(v[i]) / n)
		}
	}
	return v
}

// embedRequest reads an embedding request, the same shape for Ollama's
// /api/embed and OpenAI's /v1/embeddings: a model and an input that is one
// string or a list of them.
func embedRequest(r *http.Request) (model string, texts []string, err error) {
	body, _ := io.ReadAll(r.Body)
	var req struct {
		Model string `json:"model"`
		Input any    `json:"input"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return "", nil, err
	}
	switch in := req.Input.(type) {
	case string:
		texts = []string{in}
	case []any:
		for _, x := range in {
			if t, ok := x.(string); ok {
				texts = append(texts, t)
			}
		}
	}
	return req.Model, texts, nil
}
