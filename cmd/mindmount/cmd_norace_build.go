//go:build !race

package main

// raceBuild is true in a binary built with -race (cmd_race_build.go).
const raceBuild = false
