package consolidate

import "cmp"

// firstNonEmpty returns the first non-empty string (it outlived the move of
// the providers to package llm, where it was defined).
func firstNonEmpty(s ...string) string { return cmp.Or(s...) }
