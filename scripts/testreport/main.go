// Command testreport reads "go test -json" on standard input and prints
// what a person reads of a plain "go test" run: each package's ok/FAIL
// line, the output of every failed test, build errors. At the end it lists
// the tests that skipped, and with -require-tools it fails when one
// skipped for want of a tool the run is supposed to have (FUSE, git,
// bubblewrap, Chromium, node/npm, setpriv): on CI, where .ci/run installs
// them all, such a skip is a test that silently did not run.
//
//	go test -json ./... | go run ./scripts/testreport -require-tools
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"sort"
	"strings"
)

// event is one line of go test -json (cmd/test2json).
type event struct {
	Action     string
	Package    string
	ImportPath string // build-output
	Test       string
	Output     string
}

// missingTool matches a skip's reason that names a tool the machine lacks.
var missingTool = regexp.MustCompile(`(?i)/dev/fuse|fusermount|bubblewrap|bwrap|chromium|\bnode\b|\bnpm\b|git cli|git not installed|git http-backend|setpriv|etcd`)

type skip struct{ test, reason string }

func main() {
	requireTools := flag.Bool("require-tools", os.Getenv("MINDMOUNT_REQUIRE_TOOLS") == "1", "fail when a test skipped for a missing tool (also MINDMOUNT_REQUIRE_TOOLS=1)")
	flag.Parse()
	skips, err := report(os.Stdin, os.Stdout)
	if err != nil {
		fmt.Fprintln(os.Stderr, "testreport:", err)
		os.Exit(2)
	}
	var missing []skip
	for _, s := range skips {
		if missingTool.MatchString(s.reason) {
			missing = append(missing, s)
		}
	}
	if len(skips) > 0 {
		fmt.Printf("%d tests skipped", len(skips))
		if len(missing) > 0 {
			fmt.Printf(", %d of them for a missing tool:\n", len(missing))
			for _, s := range missing {
				fmt.Printf("  %s: %s\n", s.test, s.reason)
			}
		} else {
			fmt.Println(" (none for a missing tool)")
		}
	}
	if *requireTools && len(missing) > 0 {
		fmt.Fprintln(os.Stderr, "tests skipped for a tool this run must have (MINDMOUNT_REQUIRE_TOOLS=1): install it, or fix the test's check")
		os.Exit(1)
	}
}

// report copies what matters of the events on r to w and returns the
// skipped tests with their reasons.
func report(r io.Reader, w io.Writer) ([]skip, error) {
	out := map[string][]string{} // a running test's output, by package and test
	var skips []skip
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		line := sc.Bytes()
		var e event
		if len(line) == 0 || line[0] != '{' || json.Unmarshal(line, &e) != nil {
			fmt.Fprintf(w, "%s\n", line) // not an event: go's own words
			continue
		}
		key := e.Package + " " + e.Test
		switch {
		case e.Action == "build-output":
			io.WriteString(w, e.Output)
		case e.Test == "":
			// The package's own lines: ok, FAIL, a panic outside a test.
			if e.Action == "output" && !strings.HasPrefix(e.Output, "PASS") && !strings.HasPrefix(e.Output, "=== ") && !strings.HasPrefix(e.Output, "--- ") {
				io.WriteString(w, e.Output)
			}
		case e.Action == "output":
			out[key] = append(out[key], e.Output)
		case e.Action == "fail":
			for _, l := range out[key] {
				io.WriteString(w, l)
			}
			delete(out, key)
		case e.Action == "skip":
			skips = append(skips, skip{test: e.Package + " " + e.Test, reason: reason(out[key])})
			delete(out, key)
		case e.Action == "pass":
			delete(out, key)
		}
	}
	sort.Slice(skips, func(i, j int) bool { return skips[i].test < skips[j].test })
	return skips, sc.Err()
}

// reason is what a skipped test said, without the runner's own lines.
func reason(lines []string) string {
	var b []string
	for _, l := range lines {
		t := strings.TrimSpace(l)
		if t == "" || strings.HasPrefix(t, "=== ") || strings.HasPrefix(t, "--- SKIP") {
			continue
		}
		b = append(b, t)
	}
	return strings.Join(b, " ")
}
