package memgraph

// IsMemoryPath reports whether rel is a markdown file that engram validates.
func IsMemoryPath(rel string) bool { return false }

// KindOf returns the kind of a memory path.
func KindOf(rel string) Kind { return KindExternal }

// IsSynthesized reports whether rel is synthesized on read.
func IsSynthesized(rel string) bool { return false }
