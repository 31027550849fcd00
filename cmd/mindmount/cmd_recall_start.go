package main

import (
	"regexp"
	"sync"
)

// lazyRegexp compiles expr on first use rather than when the program
// starts: every command, "mindmount recall" included, pays for the
// package-level initialisation of all of them.
func lazyRegexp(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}
