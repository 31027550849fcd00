// Package memgraph is the memory model of a mindmount repository: the memory
// file format (parse and render with an exact round-trip), validation, slugs,
// lifecycle, ranking, index and context rendering, recall, and an in-memory
// graph of one repository kept current by change events.
//
// It knows nothing about FUSE, HTTP or language models: the mount, the watch
// mode, the CLI and consolidation all drive it the same way.
package memgraph

// The types below are shared by every package (they come from the team
// contract); the functions live in the files named in each comment.

import (
	"time"
)

// Status is a memory's lifecycle state (frontmatter key `status`).
type Status string

const (
	StatusActive       Status = "active"
	StatusSuperseded   Status = "superseded"
	StatusRetracted    Status = "retracted"
	StatusContradicted Status = "contradicted"
)

// Kind says which folder a memory lives in.
type Kind string

const (
	KindUser      Kind = "user"      // user_memory/<slug>.md
	KindCharacter Kind = "character" // character_memory/<slug>.md
	KindBlock     Kind = "block"     // character.md, user.md, system/**.md
	KindExternal  Kind = "external"  // any other folder's *.md
	KindSkill     Kind = "skill"     // skills/<name>/SKILL.md (skill.go)
)

// Well-known repository paths (slash-separated, relative to the repo root).
const (
	CharacterFile  = "character.md"
	UserFile       = "user.md"
	UserDir        = "user_memory"
	CharacterDir   = "character_memory"
	SystemDir      = "system"
	TranscriptsDir = "transcripts"
	StateDir       = ".mindmount"
	UserIndexFile  = "user_memory.md"      // synthesized
	CharIndexFile  = "character_memory.md" // synthesized
	ContextFile    = "CONTEXT.md"          // synthesized
	StatusFile     = ".mindmount/status"   // synthesized
	MaxFileSize    = 64 << 10              // 64 KiB: the size rule (size.go)
	MaxSlugLen     = 80
	DateLayout     = "02.01.06" // access log dates: DD.MM.YY
)

// Problem is one validation finding. Line is 1-based, 0 when it applies to
// the whole file. String() renders "path:line: message" (or "path: message").
type Problem struct {
	Path string
	Line int
	Msg  string
	// Err is the typed reason, for errors.Is, when a caller must tell
	// this problem from others (tracker.ErrReadOnly); usually nil.
	Err error
}

// Frontmatter holds the known keys. Unknown keys make a file invalid.
// (format.go)
type Frontmatter struct {
	Description  string
	Status       Status // "" means active
	Supersedes   string // repo path without .md, e.g. user_memory/likes-tea
	SupersededBy string
	ReadOnly     bool
	// Pinned: ranked before every unpinned memory and always in the
	// compiled context, counted against its budget first (a safety fact:
	// an allergy). A "## Pinned" section (the reference's mark) reads as
	// pinned: true.
	Pinned  bool
	Created string   // DD.MM.YY or RFC 3339 date, free text kept as is
	Source  string   // provenance, e.g. "consolidate transcripts/s1.jsonl#1-5"
	Tags    []string // a YAML list, or one comma-separated line
	Topic   string   // what the memory is about, not its value: "home-city" (topic.go)
	// Keywords: search terms a question may use that the text does not
	// (recall).
	Keywords []string
	// PromotedFrom names where a team memory was promoted from:
	// "<user>:<commit>:<path>" (mindmount promote).
	PromotedFrom string
}

// Memory is one parsed markdown file. It keeps enough of the original bytes
// that Render returns them unchanged when nothing was modified, and keeps any
// section or text it does not understand. (format.go)
//
// Fields are read-only for callers; change a memory with the Set*/AddUse
// methods so the raw text stays in step. Memories handed out by a Graph are
// copies: changing one never changes what the graph serves.
type Memory struct {
	Path     string // repo-relative, slash-separated
	Front    Frontmatter
	Title    string    // text of the first "# " heading
	Fact     string    // body of "## Fact", trimmed
	Episode  string    // body of "## Episode", trimmed
	Uses     int       // number of "used, DD.MM.YY" lines in "## Access log"
	LastUsed time.Time // most recent access log date; zero if none

	raw rawMemory // the original pieces, for an exact round-trip (format.go)
}

// ContextOptions bounds CONTEXT.md. (context.go)
type ContextOptions struct {
	MaxBytes int // 0 = default (32 KiB); an explicit truncation marker is written when exceeded
	// MaxTokens is the budget in estimated tokens (BytesPerToken bytes
	// each), used when MaxBytes is 0.
	MaxTokens int
}
