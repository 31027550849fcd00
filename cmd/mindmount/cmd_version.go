package main

import (
	"context"
	"fmt"
	"runtime/debug"
)

// version is set by the linker (-X main.version=...) for releases.
var version = "dev"

// versionCommand is "mindmount version".
var versionCommand = newCommand(command{
	name:    "version",
	usage:   "version",
	summary: "print the mindmount version",
	help:    "Prints the mindmount version and the Go toolchain that built it.",
}, runVersion)

// runVersion prints the version and the Go toolchain.
func runVersion(_ context.Context, o *noOptions, args []string) error {
	v := versionString()
	gov := "unknown"
	if bi, ok := debug.ReadBuildInfo(); ok {
		gov = bi.GoVersion
	}
	fmt.Fprintf(stdout, "mindmount %s (%s)\n", v, gov)
	return nil
}

// versionString is the one version mindmount reports: --version, MCP's
// serverInfo, HTTP /health. The linker's, else the module's, else "dev".
func versionString() string {
	v := version
	if bi, ok := debug.ReadBuildInfo(); ok && v == "dev" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		v = bi.Main.Version
	}
	return v
}
