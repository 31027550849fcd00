package memgraph

// RenderIndex renders user_memory.md / character_memory.md.
func RenderIndex(kind Kind, ranked []*Memory) []byte { return nil }
