package memgraph

// Placeholder hooks: H3 (recall) replaces this file with the real recall glue.

func (g *Graph) recallPut(m *Memory) {}

func (g *Graph) recallDelete(rel string) {}
