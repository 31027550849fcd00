package memgraph

import "sync"

// Graph is the in-memory model of one repository. Safe for concurrent use.
type Graph struct {
	mu   sync.RWMutex
	root string
}

// Scan reads every memory file under root once.
func Scan(root string) (*Graph, error) { return &Graph{root: root}, nil }

// Root returns the repository directory.
func (g *Graph) Root() string { return g.root }

// Update re-reads one file from disk.
func (g *Graph) Update(rel string) error { return nil }

// Put updates one file from bytes already in hand.
func (g *Graph) Put(rel string, data []byte) {}

// Remove forgets a file.
func (g *Graph) Remove(rel string) {}

// Rename moves a file.
func (g *Graph) Rename(oldRel, newRel string) {}

// Get returns the last valid version of rel, nil if none.
func (g *Graph) Get(rel string) *Memory { return nil }

// Memories returns every parsed memory of kind, any status.
func (g *Graph) Memories(kind Kind) []*Memory { return nil }

// Problems returns the current problems of invalid files, sorted.
func (g *Graph) Problems() []Problem { return nil }

// ReadOnly reports whether the last valid version has read_only: true.
func (g *Graph) ReadOnly(rel string) bool { return false }

// Index returns the rendered index of kind.
func (g *Graph) Index(kind Kind) []byte { return nil }

// Context returns the compiled context.
func (g *Graph) Context(opt ContextOptions) []byte { return nil }

// Version bumps on every change.
func (g *Graph) Version() uint64 { return 0 }

// Subscribe registers fn to be called after each change with the changed paths.
func (g *Graph) Subscribe(fn func(changed []string)) {}
