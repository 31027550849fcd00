package recall

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// benchWords is a small vocabulary with a Zipf-like use, so some terms are
// in thousands of documents and others in a handful, as in real memories.
var benchWords = strings.Fields(`dog cat coffee tea allergy peanut work office project meeting friend
family daughter partner city travel train flight book read music guitar chess climb swim run
marathon knee doctor diet fish meat vegetarian spelling tone answer short long format date name
code editor python golang database weekend morning evening birthday gift house money save budget
language portuguese spanish lesson tutor garden plant recipe bake bread cheese wine beer movie`)

func benchDoc(r *rand.Rand, i int) Doc {
	z := rand.NewZipf(r, 1.2, 2, uint64(len(benchWords)-1))
	sentence := func(n int) string {
		ws := make([]string, n)
		for j := range ws {
			ws[j] = benchWords[z.Uint64()]
		}
		return strings.Join(ws, " ")
	}
	return Doc{
		Path:        fmt.Sprintf("user_memory/m-%05d.md", i),
		Kind:        "user",
		Title:       sentence(3),
		Description: sentence(8),
		Fact:        sentence(25),
		Episode:     sentence(10),
		Active:      i%10 != 0,
		Uses:        i % 7,
	}
}

func benchIndex(n int) *Index {
	r := rand.New(rand.NewPCG(1, 2))
	ix := New()
	for i := range n {
		ix.Put(benchDoc(r, i))
	}
	return ix
}

var benchQueries = []string{
	"What is the name of the user's dog?",
	"does the user have allergies",
	"coffee or tea in the morning",
	"which language lessons with a tutor",
	"work project meeting with a friend",
	"marathon knee doctor",
}

// BenchmarkSearchDense is the worst case: one query against 10,000
// memories drawn from an 80-word vocabulary, so every query term is in
// thousands of memories. BenchmarkSearch (bench_golden_test.go) is the
// realistic case.
func BenchmarkSearchDense(b *testing.B) {
	ix := benchIndex(10000)
	b.ResetTimer()
	i := 0
	for b.Loop() {
		ix.Search(benchQueries[i%len(benchQueries)], Options{K: 10})
		i++
	}
}

// BenchmarkPut replaces one memory in an index of 10,000: the cost of one
// write event.
func BenchmarkPut(b *testing.B) {
	ix := benchIndex(10000)
	r := rand.New(rand.NewPCG(3, 4))
	docs := make([]Doc, 100)
	for i := range docs {
		docs[i] = benchDoc(r, i*97)
	}
	b.ResetTimer()
	i := 0
	for b.Loop() {
		ix.Put(docs[i%len(docs)])
		i++
	}
}
