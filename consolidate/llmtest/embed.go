package llmtest

import (
	"hash/fnv"
	"math"
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
