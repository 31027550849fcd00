package mindmount

import (
	"encoding/json"
	"errors"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/mindmount/mindmount"

// refMovers are gitrepo's methods that move a ref: Record, the one commit
// sequence, and its two shorthands.
var refMovers = []string{"Record", "Commit", "Apply"}

// refWriters may call them: the tracker, the one writer of a repository,
// and gitrepo itself (the mechanism).
var refWriters = []string{module + "/fs/tracker", module + "/fs/gitrepo"}

// TestOnlyTheTrackerMovesRefs type-checks every package of the module
// (tests left out: a test may build a repository however it likes) and
// fails on any use of a ref-moving method of *gitrepo.Repo outside the
// tracker. Consolidation, sync merges, init and the web page hand the
// tracker a prepared change instead (tracker.Apply, or tracker.Alone
// where no tracker runs).
func TestOnlyTheTrackerMovesRefs(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("needs the go command")
	}
	pkgs := listExport(t)
	exports := map[string]string{}
	for _, p := range pkgs {
		exports[p.ImportPath] = p.Export
	}
	fset := token.NewFileSet()
	imp := importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		f, ok := exports[path]
		if !ok || f == "" {
			return nil, errors.New("no export data for " + path)
		}
		return os.Open(f)
	})
	checked := 0
	for _, p := range pkgs {
		if p.Module == nil || p.Module.Path != module || p.ImportPath == module || slices.Contains(refWriters, p.ImportPath) {
			continue
		}
		var files []*ast.File
		for _, name := range p.GoFiles {
			f, err := parser.ParseFile(fset, filepath.Join(p.Dir, name), nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			files = append(files, f)
		}
		info := &types.Info{Uses: map[*ast.Ident]types.Object{}}
		conf := types.Config{Importer: imp, Error: func(error) {}}
		if _, err := conf.Check(p.ImportPath, fset, files, info); err != nil {
			t.Fatalf("type-check %s: %v", p.ImportPath, err)
		}
		checked++
		for id, obj := range info.Uses {
			if fn, ok := obj.(*types.Func); ok && movesRef(fn) {
				t.Errorf("%s: %s calls gitrepo's (*Repo).%s, which moves a ref: hand the tracker a prepared change (tracker.Apply or tracker.Alone)",
					fset.Position(id.Pos()), p.ImportPath, fn.Name())
			}
		}
	}
	if checked < 20 {
		t.Fatalf("only %d packages checked: go list output not understood", checked)
	}
}

// movesRef reports whether fn is a ref-moving method of *gitrepo.Repo.
func movesRef(fn *types.Func) bool {
	sig, ok := fn.Type().(*types.Signature)
	if !ok || sig.Recv() == nil || !slices.Contains(refMovers, fn.Name()) {
		return false
	}
	rt := sig.Recv().Type()
	if p, ok := rt.(*types.Pointer); ok {
		rt = p.Elem()
	}
	n, ok := rt.(*types.Named)
	return ok && n.Obj().Name() == "Repo" && n.Obj().Pkg() != nil && n.Obj().Pkg().Path() == module+"/fs/gitrepo"
}

type listedPkg struct {
	ImportPath string
	Dir        string
	Export     string
	GoFiles    []string
	Module     *struct{ Path string }
}

// listExport lists the module's packages and their dependencies with
// their export data (go list -export builds what is not cached yet).
func listExport(t *testing.T) []listedPkg {
	t.Helper()
	cmd := exec.Command("go", "list", "-deps", "-export", "-json=ImportPath,Dir,Export,GoFiles,Module", "./...")
	out, err := cmd.Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.Fatalf("go list: %v\n%s", err, ee.Stderr)
		}
		t.Fatalf("go list: %v", err)
	}
	var pkgs []listedPkg
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for dec.More() {
		var p listedPkg
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		pkgs = append(pkgs, p)
	}
	return pkgs
}
