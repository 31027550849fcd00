package main

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// initBudget is the most one of this module's packages may allocate while
// it initialises: every command, "mindmount recall" included, pays for
// the package-level variables of all of them before it starts. A regular
// expression, a template, a parser or a table a package needs is built at
// its first use (sync.OnceValue), never at start. (A regular expression
// compiled at start allocates 3–40 KB; every package of the module
// allocates at most about 3.5 KB today, the command table 11 KB.)
const (
	initBudget     = 8 << 10
	initBudgetMain = 24 << 10 // the commands' package: its command table
)

// initCost is one package's line of GODEBUG=inittrace=1.
type initCost struct {
	pkg    string
	bytes  int
	allocs int
}

// parseInitTrace reads GODEBUG=inittrace=1's lines: "init PKG @T ms, C ms
// clock, B bytes, N allocs". Other lines are skipped.
func parseInitTrace(out []byte) []initCost {
	var costs []initCost
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) != 11 || f[0] != "init" || f[8] != "bytes," || f[10] != "allocs" {
			continue
		}
		b, err1 := strconv.Atoi(f[7])
		n, err2 := strconv.Atoi(f[9])
		if err1 != nil || err2 != nil {
			continue
		}
		costs = append(costs, initCost{pkg: f[1], bytes: b, allocs: n})
	}
	return costs
}

// TestInitIsLight runs this binary as "mindmount version" with the Go
// runtime's trace of package initialisation and fails when a package of
// this module allocates more than initBudget at start: a heavy
// package-level variable (a regular expression, a table, a parsed
// template) is back where every command pays for it. Allocations are
// counted, not timed: the same build allocates the same at every run.
func TestInitIsLight(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, exe, "version")
	cmd.Env = append(withoutEnv(os.Environ(), "GODEBUG"), "GODEBUG=inittrace=1", ownerEnv+"=version")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("version: %v\n%s", err, stderr.Bytes())
	}
	const mod = "github.com/mindmount/mindmount"
	seen := 0
	for _, c := range parseInitTrace(stderr.Bytes()) {
		budget := initBudget
		switch {
		case c.pkg == mod+"/cmd/mindmount" || c.pkg == "main":
			budget = initBudgetMain
		case c.pkg == mod || strings.HasPrefix(c.pkg, mod+"/"):
		default:
			continue
		}
		seen++
		if c.bytes > budget {
			t.Errorf("%s allocates %d bytes (%d allocations) when the program starts, over its budget of %d: build what it needs at first use (sync.OnceValue)", c.pkg, c.bytes, c.allocs, budget)
		}
	}
	// The module's packages that initialise anything at all: far more
	// than a handful, or the trace was not read.
	if seen < 10 {
		t.Fatalf("the init trace names %d of this module's packages: was it read?\n%s", seen, stderr.Bytes())
	}
}

// TestParseInitTrace reads the runtime's lines and skips anything else.
func TestParseInitTrace(t *testing.T) {
	out := []byte("init internal/bytealg @0.002 ms, 0 ms clock, 0 bytes, 0 allocs\n" +
		"init github.com/mindmount/mindmount/memgraph @31 ms, 0.10 ms clock, 24528 bytes, 278 allocs\n" +
		"mindmount dev (go1.26)\n" +
		"init broken @1 ms, x ms clock, many bytes, 3 allocs\n")
	got := parseInitTrace(out)
	want := []initCost{{"internal/bytealg", 0, 0}, {"github.com/mindmount/mindmount/memgraph", 24528, 278}}
	if len(got) != len(want) {
		t.Fatalf("got %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("line %d: got %+v, want %+v", i, got[i], want[i])
		}
	}
}

// FuzzParseInitTrace: any text parses without panicking, each cost named
// by its package.
func FuzzParseInitTrace(f *testing.F) {
	f.Add([]byte("init main @67 ms, 0.35 ms clock, 10976 bytes, 145 allocs\n"))
	f.Add([]byte("init x @1 ms, 1 ms clock, -1 bytes, 0 allocs"))
	f.Fuzz(func(t *testing.T, out []byte) {
		for _, c := range parseInitTrace(out) {
			if c.pkg == "" {
				t.Fatalf("a cost without a package: %+v", c)
			}
		}
	})
}
