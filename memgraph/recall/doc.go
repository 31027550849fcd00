// Package recall ranks memories for a free-text question.
//
// It is a small hand-written inverted index rather than a full search
// library: the corpus is tiny per repository (thousands of short documents),
// the index must be updated on every write in time proportional to the
// document, and queries must answer in well under a millisecond. Terms are
// lower-cased, accent-folded, stop-word filtered and stemmed with the
// Snowball (Porter2) English stemmer; documents are scored with BM25F over
// four weighted fields (title, description, fact, episode) and a mild prior
// for the use count. A name the question writes that a memory's title
// holds counts the memory as about that name. When an Expander is set (the
// graph sets WordNet's, package wordnet, when it is installed), each word
// of a question also looks for its related nouns, weighted below it.
//
// When an Embedder is configured, memories are also embedded (cached by
// content hash outside git, filled in the background) and the keyword and
// vector rankings are fused with reciprocal rank fusion. Recall never needs
// the network: without vectors, or when the model fails, the keyword ranking
// answers alone.
//
// The package knows nothing about memory files or repositories; memgraph
// converts its memories into Docs and keeps the index current.
package recall
