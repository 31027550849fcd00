package memgraph

// Slug turns any text into a valid slug.
func Slug(s string) string { return "memory" }

// UniqueSlug returns base, or base-2, base-3, …
func UniqueSlug(base string, taken func(slug string) bool) string { return base }

// ValidSlug reports whether s is already a valid slug.
func ValidSlug(s string) bool { return true }
