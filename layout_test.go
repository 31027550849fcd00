package mindmount

import (
	"bufio"
	"bytes"
	"errors"
	"os/exec"
	"strings"
	"testing"
)

// layers are the card's top-level folders, lowest first (doc.go, rule 1).
var layers = []string{"template", "memgraph", "fs", "consolidate", "hooks", "cmd", "scripts"}

// fixtures may import the package they sit in (doc.go, rule 2).
var fixtures = map[string]bool{"llmtest": true, "secrettest": true, "githubtest": true, "conformance": true, "golden": true}

// importProblem says why package from (a path relative to the module)
// may not import to, or "" when it may.
func importProblem(from, to string) string {
	lf, lt := layerOf(from), layerOf(to)
	if lf < 0 || lt < 0 {
		return "not under one of the top-level folders " + strings.Join(layers, ", ")
	}
	if lt > lf {
		return layers[lt] + " is a higher layer than " + layers[lf]
	}
	if strings.HasPrefix(from, to+"/") {
		last := from[strings.LastIndex(from, "/")+1:]
		if !fixtures[last] {
			return to + " is a folder it sits in (a parent composes its children)"
		}
	}
	return ""
}

func layerOf(p string) int {
	top, _, _ := strings.Cut(p, "/")
	for i, l := range layers {
		if l == top {
			return i
		}
	}
	return -1
}

func TestImportProblem(t *testing.T) {
	for _, c := range []struct {
		from, to string
		ok       bool
	}{
		{"fs", "fs/tracker", true},
		{"fs/tracker", "fs/tracker/gitrepo", true},
		{"fs/tracker", "memgraph", true},
		{"fs/tracker/gitrepo", "memgraph/atomicfile", true},
		{"memgraph/recall", "memgraph/atomicfile", true},
		{"consolidate/golden", "consolidate", true},
		{"cmd/mindmount/internal/httpapi", "cmd/mindmount/internal/host", true},
		{"fs/tracker", "fs", false},
		{"memgraph/tracker", "memgraph", false},
		{"memgraph", "fs/tracker", false},
		{"fs", "consolidate", false},
		{"consolidate", "cmd/mindmount/internal/sync", false},
		{"hooks/remote", "hooks", false},
		{"cmd/mindmount/internal/host", "cmd/mindmount", false},
		{"util", "memgraph", false},
	} {
		if got := importProblem(c.from, c.to); (got == "") != c.ok {
			t.Errorf("%s -> %s: problem %q, want allowed=%v", c.from, c.to, got, c.ok)
		}
	}
}

// TestLayout checks every import of the module's packages against the
// two rules of doc.go. Tests are left out: a test may check a lower layer
// against a higher one (the template against the memory model, the
// secret rules against the consolidation goldens).
func TestLayout(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("needs the go command")
	}
	out, err := exec.Command("go", "list", "-f",
		`{{.ImportPath}} {{join .Imports " "}}`,
		"./...").Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.Fatalf("go list: %v\n%s", err, ee.Stderr)
		}
		t.Fatalf("go list: %v", err)
	}
	const mod = "github.com/mindmount/mindmount/"
	seen := 0
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 0 || !strings.HasPrefix(f[0], mod) {
			continue // the root package: doc.go and this test
		}
		from := strings.TrimPrefix(f[0], mod)
		for _, imp := range f[1:] {
			to, ok := strings.CutPrefix(imp, mod)
			if !ok || to == from {
				continue
			}
			seen++
			if p := importProblem(from, to); p != "" {
				t.Errorf("%s imports %s: %s", from, to, p)
			}
		}
	}
	if seen < 60 {
		t.Fatalf("only %d imports between the module's packages: go list output not understood", seen)
	}
}
