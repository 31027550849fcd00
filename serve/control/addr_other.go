//go:build !linux

package control

// shortPath calls fn with path: without /proc a folder handle cannot
// shorten it, and a path over 107 bytes cannot be bound.
func shortPath(path string, fn func(name string) error) error { return fn(path) }
