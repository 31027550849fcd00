package mindmount

import (
	"bufio"
	"bytes"
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// layers are the card's top-level folders, lowest first (doc.go, rule 1).
var layers = []string{"template", "memgraph", "fs", "consolidate", "hooks", "serve", "cmd", "scripts"}

// fixtures may import the package they sit in (doc.go, rule 2).
var fixtures = map[string]bool{"llmtest": true, "secrettest": true, "scopetest": true, "clustertest": true, "githubtest": true, "conformance": true, "golden": true}

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
		{"fs/mount", "fs/tracker", true},
		{"fs/tracker", "fs/gitrepo", true},
		{"fs/tracker", "memgraph", true},
		{"fs/gitrepo", "memgraph/atomicfile", true},
		{"memgraph/recall", "memgraph/atomicfile", true},
		{"consolidate/golden", "consolidate", true},
		{"serve/httpapi", "serve/host", true},
		{"serve/host", "fs/mount", true},
		{"serve/remote", "hooks", true},
		{"hooks", "serve/remote", false},
		{"fs/tracker", "fs", false},
		{"fs/gitrepo/failpoint", "fs/gitrepo", false},
		{"memgraph/tracker", "memgraph", false},
		{"memgraph", "fs/tracker", false},
		{"fs", "consolidate", false},
		{"consolidate", "serve/remote", false},
		{"hooks/remote", "hooks", false},
		{"serve/host", "cmd/mindmount", false},
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

// TestNoSafeDirectory: no non-test Go file names git's safe.directory,
// nor duplicates a descriptor without close-on-exec (below).
// Setting it (to "*" above all) makes git trust a repository another user
// owns, whose configuration then runs its programs with the caller's
// rights; a command run as root on a user's repository runs as that user
// instead (cmd/mindmount asOwner), and reads a tree it does not trust
// with go-git or a scrubbed configuration (host.Git).
func TestNoSafeDirectory(t *testing.T) {
	checked := 0
	err := eachGoSource(func(p string) error {
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		checked++
		if bytes.Contains(b, []byte("safe."+"directory")) {
			t.Errorf("%s names safe.directory", p)
		}
		// dup(2) makes a descriptor without close-on-exec: one on a
		// user's folder then reaches every process the daemon starts
		// meanwhile (a spare worker that becomes another user's).
		for _, dup := range []string{"unix.Dup" + "(", "syscall.Dup" + "("} {
			if bytes.Contains(b, []byte(dup)) {
				t.Errorf("%s calls %s: use fcntl F_DUPFD_CLOEXEC", p, strings.TrimSuffix(dup, "("))
			}
		}
		// x/sys/unix's Setgroups changes the calling thread only (its
		// set*id calls hand over to syscall's): a worker's other threads
		// would keep root's groups. syscall.Setgroups changes every thread.
		if bytes.Contains(b, []byte("unix.Setgroups"+"(")) {
			t.Errorf("%s calls unix.Setgroups, which changes one thread: use syscall.Setgroups", p)
		}
		// Comments say what and why; which issue asked for it is git's.
		if m := regexp.MustCompile(`//.*\b(?i:issue|defect) [0-9]+`).Find(b); m != nil {
			t.Errorf("%s: a comment names an issue (%q): say what and why, not which issue", p, m)
		}
		// A tree is handed to a uid one way (serve/host GiveTo: no link
		// followed, no second hard link, no other user's file); a plain
		// walk that chowned everything once sat beside it.
		if p != filepath.Join("serve", "host", "owner.go") && (bytes.Contains(b, []byte("os.Lchown"+"(")) || bytes.Contains(b, []byte("Fchownat"+"("))) {
			t.Errorf("%s changes owners itself: hand a tree over with serve/host GiveTo", p)
		}
		// A served user's ROOT is found one way (serve/host userDirOf:
		// links resolved, then ROOT/users/<id> by shape); a second
		// derivation once let a link to a served repository escape the
		// "is it served" check.
		if p != filepath.Join("serve", "host", "registry.go") && regexp.MustCompile(`[!=]= (host\.)?UsersDir\b`).Match(b) {
			t.Errorf("%s compares a path with UsersDir: use serve/host ServedUser, ServedBy or RootOf", p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 100 {
		t.Fatalf("only %d Go files checked", checked)
	}
}

// TestOneReaderOfTheUseStamp: the access log's "used, DD.MM.YY" stamp is
// read and written by memgraph alone (UseStamp, UseDates, AddUse); a
// string literal that starts a stamp, or a pattern for one, anywhere else
// is a second home of the format.
func TestOneReaderOfTheUseStamp(t *testing.T) {
	checked := 0
	err := eachGoSource(func(p string) error {
		if strings.HasPrefix(p, "memgraph"+string(filepath.Separator)) {
			return nil // the format's home
		}
		f, err := parser.ParseFile(token.NewFileSet(), p, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		checked++
		ast.Inspect(f, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			s, err := strconv.Unquote(lit.Value)
			if err == nil && (strings.HasPrefix(s, "used,") || strings.Contains(s, "^used,")) {
				t.Errorf("%s: %s reads or writes the access log's use stamp: use memgraph.UseStamp / UseDates / AddUse", p, lit.Value)
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 100 {
		t.Fatalf("only %d Go files checked", checked)
	}
}

// longFunctions are the functions over maxFuncLines when the rule came in,
// each with the length it may not pass: a debt to pay down (split the
// function, then delete its line), never to grow. A new function over the
// limit fails the test.
var longFunctions = map[string]int{}

// maxFuncLines is the longest a function may be, outside tests.
const maxFuncLines = 80

// TestOneMergePerPath: hooks.MergeFile is the one three-way merge of a
// repository's file (doc.go); no other package declares a merge of its
// own under one of its rules' names (any case), and no program of the tree
// runs "git merge-file", whose choice of merge is not the path's.
func TestOneMergePerPath(t *testing.T) {
	rules := map[string]bool{"mergefile": true, "mergememory": true, "mergecursors": true, "mergelines": true}
	for dir, ds := range topLevelDecls(t) {
		for name, kind := range ds {
			if kind == "func" && dir != "hooks" && rules[strings.ToLower(name)] {
				t.Errorf("%s declares %s: a second merge per path; use hooks.MergeFile", dir, name)
			}
		}
	}
	err := eachGoSource(func(p string) error {
		f, err := parser.ParseFile(token.NewFileSet(), p, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING {
				if s, err := strconv.Unquote(lit.Value); err == nil && strings.TrimSpace(s) == "merge-file" {
					t.Errorf("%s runs git merge-file: use hooks.MergeFile", p)
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// memgraphFileReads are the calls by which package memgraph still reads
// the file system itself, by file: a debt. memgraph is to take bytes or an
// fs.FS from its caller (the tracker) and to write no file; a read is
// allowed only where listed, and the list only shrinks (an entry no
// longer found fails: take it off).
var memgraphFileReads = map[string]bool{
	"memgraph/graph.go os.Stat":         true, // Scan: is the root a folder
	"memgraph/graph.go subtree.Open":    true, // Scan, ScanFile: the tree's files
	"memgraph/operator.go syscall.Stat": true, // OperatorSource: the settings' stamp
	"memgraph/operator.go os.ReadFile":  true, // OperatorSource: the settings
}

// fileCalls are the calls that reach the file system: a write (true) or
// a read (false), by package and function; every call of atomicfile
// writes, every call of subtree opens a tree to read.
var fileCalls = map[string]map[string]bool{
	"os": {"WriteFile": true, "MkdirAll": true, "Mkdir": true, "Create": true, "OpenFile": true, "Remove": true,
		"RemoveAll": true, "Rename": true, "Chmod": true, "Chown": true, "Lchown": true, "Symlink": true, "Link": true,
		"Truncate": true, "Chtimes": true, "CreateTemp": true, "MkdirTemp": true,
		"Stat": false, "Lstat": false, "ReadFile": false, "Open": false, "ReadDir": false, "Readlink": false, "DirFS": false},
	"syscall": {"Stat": false, "Lstat": false, "Open": false, "Openat": false, "Mkdir": true, "Unlink": true, "Rename": true},
	"unix":    {"Stat": false, "Lstat": false, "Open": false, "Openat": false, "Mkdirat": true, "Unlinkat": true, "Renameat": true},
}

// TestMemgraphWritesNoFile: package memgraph (its own files; its
// subpackages are not held to it yet) writes no file, and reads one only
// where memgraphFileReads still lists it.
func TestMemgraphWritesNoFile(t *testing.T) {
	seen := map[string]bool{}
	err := eachGoSource(func(p string) error {
		if filepath.ToSlash(filepath.Dir(p)) != "memgraph" {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), p, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			pkg, ok := sel.X.(*ast.Ident)
			if !ok {
				return true
			}
			write, known := fileCalls[pkg.Name][sel.Sel.Name]
			switch pkg.Name {
			case "atomicfile":
				write, known = true, true
			case "subtree":
				known = true
			}
			key := filepath.ToSlash(p) + " " + pkg.Name + "." + sel.Sel.Name
			switch {
			case !known:
			case write:
				t.Errorf("%s writes a file: memgraph hands its bytes to the caller (the tracker writes them)", key)
			case !memgraphFileReads[key]:
				t.Errorf("%s reads a file: memgraph takes bytes or an fs.FS from its caller", key)
			default:
				seen[key] = true
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for k := range memgraphFileReads {
		if !seen[k] {
			t.Errorf("memgraphFileReads lists %q, which memgraph no longer calls: take it off", k)
		}
	}
}

// TestFunctionLength holds every non-test function to maxFuncLines, but
// for the listed debts, which may only shrink.
func TestFunctionLength(t *testing.T) {
	checked := 0
	owed := map[string]bool{}
	err := eachGoSource(func(p string) error {
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			fd, ok := decl.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			checked++
			n := fset.Position(fd.End()).Line - fset.Position(fd.Pos()).Line + 1
			limit, debt := longFunctions[p+" "+fd.Name.Name]
			if !debt {
				limit = maxFuncLines
			}
			if n > limit {
				t.Errorf("%s: %s is %d lines, over %d: split it", p, fd.Name.Name, n, limit)
			}
			if debt && n <= maxFuncLines {
				t.Errorf("%s: %s is %d lines now: take it off longFunctions", p, fd.Name.Name, n)
			}
			if debt {
				owed[p+" "+fd.Name.Name] = true
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for k := range longFunctions {
		if !owed[k] {
			t.Errorf("longFunctions lists %q, which no longer exists: take it off", k)
		}
	}
	if checked < 500 {
		t.Fatalf("only %d functions checked", checked)
	}
}

// docPackages reads the package map of doc.go: every package it names,
// a child ("  host") joined to the folder above it ("serve").
func docPackages(t *testing.T) map[string]bool {
	b, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(b), "// The packages, highest first:\n//\n")
	if !ok {
		t.Fatal("doc.go has no package map")
	}
	names := map[string]bool{}
	parent := ""
	for _, l := range strings.Split(rest, "\n") {
		body, ok := strings.CutPrefix(l, "//\t")
		if !ok {
			break // the map ends at its first line that is not a row
		}
		if strings.HasPrefix(body, "  ") && !strings.HasPrefix(body, "   ") {
			names[parent+"/"+strings.Fields(body)[0]] = true
			continue
		}
		if body == "" || body[0] == ' ' {
			continue // a row's continuation
		}
		parent = strings.Fields(body)[0]
		names[parent] = true
	}
	return names
}

// TestDocNamesEveryPackage: doc.go's map names every package of the
// module (but fixtures, scripts and deployment files) and nothing that is
// not one, so the map cannot drift from the tree.
func TestDocNamesEveryPackage(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("needs the go command")
	}
	out, err := exec.Command("go", "list", "./...").Output()
	if err != nil {
		t.Fatal(err)
	}
	const mod = "github.com/mindmount/mindmount"
	real := map[string]bool{}
	for _, p := range strings.Fields(string(out)) {
		rel, ok := strings.CutPrefix(p, mod+"/")
		if !ok {
			continue
		}
		top, _, _ := strings.Cut(rel, "/")
		if top == "scripts" || top == "deploy" || fixtures[rel[strings.LastIndex(rel, "/")+1:]] {
			continue
		}
		real[rel] = true
	}
	doc := docPackages(t)
	for p := range real {
		if !doc[p] {
			t.Errorf("doc.go's map does not name package %s", p)
		}
	}
	for p := range doc {
		if _, err := os.Stat(p); err != nil && !real[p] {
			t.Errorf("doc.go's map names %s, which is no folder of the tree", p)
		}
	}
}

// TestDocRuleHomesAreTheOnlyDefinitions: every rule home doc.go names as
// pkg.Name is declared in that package, and no other package of the tree
// declares a function (for a function) or a type, variable or constant
// (for one of those) of the same name outside tests — a second home of a
// rule usually starts as a copy under the same name.
func TestDocRuleHomesAreTheOnlyDefinitions(t *testing.T) {
	src, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	_, homes, ok := strings.Cut(string(src), "One home for each rule")
	if !ok {
		t.Fatal(`doc.go has no "One home for each rule" section`)
	}
	names := regexp.MustCompile(`\b([a-z][a-z0-9]*(?:/[a-z0-9]+)*)\.([A-Z][A-Za-z0-9]*)(\.[A-Z])?`).FindAllStringSubmatch(homes, -1)
	if len(names) < 20 {
		t.Fatalf("only %d rule homes found in doc.go: is the section's format changed?", len(names))
	}
	decls := topLevelDecls(t) // package folder -> name -> kind
	for _, m := range names {
		qual, name := m[1], m[2]
		var home string
		for dir := range decls {
			if dir == qual || strings.HasSuffix(dir, "/"+qual) || dir == "." && qual == "mindmount" {
				if home != "" {
					t.Errorf("doc.go's %s.%s: %s names both %s and %s", qual, name, qual, home, dir)
				}
				home = dir
			}
		}
		kind, declared := decls[home][name]
		if home == "" || !declared {
			t.Errorf("doc.go names %s.%s as a rule's home, but no package %s declares %s", qual, name, qual, name)
			continue
		}
		if m[3] != "" {
			continue // pkg.Type.Method: the home is the method, not the type's name
		}
		for dir, ds := range decls {
			if dir != home && ds[name] == kind && !fixtures[path.Base(dir)] {
				t.Errorf("%s declares %s %s beside the rule's home %s.%s (doc.go): a second home?", dir, map[string]string{"func": "a function", "decl": "a type, variable or constant"}[kind], name, home, name)
			}
		}
	}
}

// TestDocFilesExist: a file doc.go names as a rule's home ("fs/tracker
// usage.go") is in the package it names, and any other Go file it names
// is somewhere in the tree, so a moved or renamed home cannot leave the
// map pointing at nothing.
func TestDocFilesExist(t *testing.T) {
	src, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Join(strings.Fields(strings.ReplaceAll(string(src), "//", " ")), " ")
	bases := map[string]bool{}
	eachGoSource(func(p string) error { bases[filepath.Base(p)] = true; return nil })
	filepath.WalkDir(".", func(p string, d fs.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(p, "_test.go") {
			bases[filepath.Base(p)] = true
		}
		return nil
	})
	files := regexp.MustCompile(`\b[a-z_0-9]+\.go\b`)
	named := 0
	for _, m := range regexp.MustCompile(`\b([a-z][a-z0-9]*(?:/[a-z0-9]+)*):? ((?:[a-z_0-9]+\.go(?:,? (?:and )?)?)+)`).FindAllStringSubmatch(text, -1) {
		if st, err := os.Stat(m[1]); err != nil || !st.IsDir() {
			continue // a word before a file's name, not a package
		}
		for _, f := range files.FindAllString(m[2], -1) {
			named++
			if _, err := os.Stat(filepath.Join(m[1], f)); err != nil {
				t.Errorf("doc.go names %s %s, which is not there", m[1], f)
			}
		}
	}
	for _, f := range files.FindAllString(text, -1) {
		if !bases[f] {
			t.Errorf("doc.go names %s, which no folder of the tree holds", f)
		}
	}
	if named < 5 {
		t.Fatalf("only %d files named with their package in doc.go: is its format changed?", named)
	}
}

// topLevelDecls maps each package folder of the tree to its top-level
// declarations outside tests: "func" for functions, "decl" for types,
// variables and constants. Methods are not top-level.
func topLevelDecls(t *testing.T) map[string]map[string]string {
	t.Helper()
	out := map[string]map[string]string{}
	err := eachGoSource(func(p string) error {
		f, err := parser.ParseFile(token.NewFileSet(), p, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		dir := filepath.ToSlash(filepath.Dir(p))
		if out[dir] == nil {
			out[dir] = map[string]string{}
		}
		for _, decl := range f.Decls {
			switch d := decl.(type) {
			case *ast.FuncDecl:
				if d.Recv == nil {
					out[dir][d.Name.Name] = "func"
				}
			case *ast.GenDecl:
				for _, spec := range d.Specs {
					switch s := spec.(type) {
					case *ast.TypeSpec:
						out[dir][s.Name.Name] = "decl"
					case *ast.ValueSpec:
						for _, n := range s.Names {
							out[dir][n.Name] = "decl"
						}
					}
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// eachGoSource calls fn with the path of every non-test Go file of the
// tree, outside hidden folders, testdata and node_modules.
func eachGoSource(fn func(p string) error) error {
	return filepath.WalkDir(".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); p != "." && (strings.HasPrefix(n, ".") || n == "testdata" || n == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		return fn(p)
	})
}
