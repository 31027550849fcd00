package memgraph

// Rank orders memories.
func Rank(ms []*Memory) []*Memory { return nil }
