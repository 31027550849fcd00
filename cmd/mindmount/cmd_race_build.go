//go:build race

package main

// raceBuild is true in a binary built with -race, whose ThreadSanitizer
// needs far more memory than a worker's bound allows.
const raceBuild = true
