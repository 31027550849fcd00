// Package memgraph is the memory model of an engram repository: the memory
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
)

// Well-known repository paths (slash-separated, relative to the repo root).
const (
	CharacterFile  = "character.md"
	UserFile       = "user.md"
	UserDir        = "user_memory"
	CharacterDir   = "character_memory"
	SystemDir      = "system"
	TranscriptsDir = "transcripts"
	StateDir       = ".engram"
	UserIndexFile  = "user_memory.md"      // synthesized
	CharIndexFile  = "character_memory.md" // synthesized
	ContextFile    = "CONTEXT.md"          // synthesized
	StatusFile     = ".engram/status"      // synthesized
	MaxFileSize    = 64 << 10              // 64 KiB: larger memory files are invalid
	MaxSlugLen     = 80
	DateLayout     = "02.01.06" // access log dates: DD.MM.YY
)

// Problem is one validation finding. Line is 1-based, 0 when it applies to
// the whole file. String() renders "path:line: message" (or "path: message").
type Problem struct {
	Path string
	Line int
	Msg  string
}

// Frontmatter holds the known keys. Unknown keys make a file invalid.
// (format.go)
type Frontmatter struct {
	Description  string
	Status       Status // "" means active
	Supersedes   string // repo path without .md, e.g. user_memory/likes-tea
	SupersededBy string
	ReadOnly     bool
	Created      string   // DD.MM.YY or RFC 3339 date, free text kept as is
	Source       string   // provenance, e.g. "consolidate transcripts/s1.jsonl#1-5"
	Tags         []string //
}

// Memory is one parsed markdown file. It keeps enough of the original bytes
// that Render returns them unchanged when nothing was modified, and keeps any
// section or text it does not understand. (format.go)
//
// Fields are read-only for callers; change a memory with the Set*/AddUse
// methods so the raw text stays in step.
type Memory struct {
	Path     string // repo-relative, slash-separated
	Front    Frontmatter
	Title    string    // text of the first "# " heading
	Fact     string    // body of "## Fact", trimmed
	Episode  string    // body of "## Episode", trimmed
	Uses     int       // number of "used, DD.MM.YY" lines in "## Access log"
	LastUsed time.Time // most recent access log date; zero if none
	// raw keeps the original pieces for an exact round-trip (format.go).

	raw rawMemory
}

// Parse parses a memory file. It never panics. Problems are returned for
// anything that makes the file invalid (see Validate); when the result is
// non-nil it is usable even if problems were found in optional parts.
// func Parse(path string, data []byte) (*Memory, []Problem)  // format.go

// Render returns the file bytes. Render(Parse(x)) == x for files we wrote.
// func (m *Memory) Render() []byte  // format.go

// Mutators (format.go), each keeps unknown sections and the access log:
// func (m *Memory) SetDescription(s string)
// func (m *Memory) SetFact(s string)
// func (m *Memory) SetEpisode(s string)
// func (m *Memory) SetStatus(s Status, supersededBy string)
// func (m *Memory) AddUse(t time.Time)            // appends "used, DD.MM.YY"
// func (m *Memory) Active() bool                  // status "" or active

// NewMemory builds a fresh memory file in the seed format. (format.go)
// func NewMemory(path, title, description, fact, episode string, created time.Time) *Memory

// Validate checks data as the new content of path. prev is the last committed
// version (nil when the file is new); it is used for the read_only rule: a
// change that sets, alters or removes read_only is invalid. (validate.go)
// func Validate(path string, data, prev []byte) []Problem

// IsMemoryPath reports whether rel is a markdown file that engram validates
// and ranks (*.md outside .git, .engram, transcripts, and not a synthesized
// file). (paths.go)
// func IsMemoryPath(rel string) bool

// KindOf returns the kind of a memory path. (paths.go)
// func KindOf(rel string) Kind

// IsSynthesized reports whether rel is one of the files the daemon makes up
// on read (user_memory.md, character_memory.md, CONTEXT.md, .engram/status,
// .engram/search/...). (paths.go)
// func IsSynthesized(rel string) bool

// Slug turns any text into a valid slug: lower-case ASCII, [a-z0-9-],
// accents folded, at most MaxSlugLen, never empty ("memory" as fallback).
// (slug.go)
// func Slug(s string) string

// UniqueSlug returns base, or base-2, base-3, … the first that taken does not
// report. (slug.go)
// func UniqueSlug(base string, taken func(slug string) bool) string

// ValidSlug reports whether s is already a valid slug. (slug.go)
// func ValidSlug(s string) bool

// Rank orders memories: active only, by use count desc, then most recent use
// desc, then slug asc. (rank.go)
// func Rank(ms []*Memory) []*Memory

// RenderIndex renders user_memory.md / character_memory.md. (index.go)
// func RenderIndex(kind Kind, ranked []*Memory) []byte

// ContextOptions bounds CONTEXT.md. (context.go)
type ContextOptions struct {
	MaxBytes int // 0 = default (32 KiB); an explicit truncation marker is written when exceeded
}

// Graph is the in-memory model of one repository. Safe for concurrent use.
// (graph.go)
//
// func Scan(root string) (*Graph, error)               // reads every memory file once
// func (g *Graph) Root() string
// func (g *Graph) Update(rel string) error              // re-read one file from disk
// func (g *Graph) Put(rel string, data []byte)          // same, from bytes already in hand
// func (g *Graph) Remove(rel string)
// func (g *Graph) Rename(oldRel, newRel string)
// func (g *Graph) Get(rel string) *Memory               // last valid version, nil if none
// func (g *Graph) Memories(kind Kind) []*Memory         // every parsed memory of kind, any status
// func (g *Graph) Problems() []Problem                  // current problems of invalid files, sorted
// func (g *Graph) ReadOnly(rel string) bool             // last valid version has read_only: true
// func (g *Graph) Index(kind Kind) []byte               // cached, recomputed lazily after changes
// func (g *Graph) Context(opt ContextOptions) []byte    // cached, recomputed lazily after changes
// func (g *Graph) Version() uint64                      // bumps on every change
// func (g *Graph) Recall(q string, opt recall.Options) []recall.Hit   // recall.go (see memgraph/recall)
