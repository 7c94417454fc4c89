// Package lint holds the house rules and the layering of this repository
// as tests, so that `go test ./...` fails when either is broken.
package lint

import (
	"bytes"
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// module is the root module's path.
const module = "github.com/tablestore/tablestore"

// repoRoot is the repository's top directory, two levels above this one.
func repoRoot(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "go.work")); err != nil {
		t.Fatalf("no go.work in %s: %v", dir, err)
	}
	return dir
}

// goCmd runs the go command in dir and returns its standard output.
func goCmd(t *testing.T, dir string, args ...string) []byte {
	t.Helper()
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go %s in %s: %v\n%s%s", strings.Join(args, " "), dir, err, out, stderr.Bytes())
	}
	return out
}

// longChecks reports whether TABLESTORE_LONG=1 asks for the whole-module
// checks, which take about a minute on two cores; CI sets it.
func longChecks(t *testing.T) {
	t.Helper()
	if testing.Short() || os.Getenv("TABLESTORE_LONG") != "1" {
		t.Skip("a whole-module check: runs with TABLESTORE_LONG=1 (as in CI)")
	}
}

// TestVet runs go vet over the root module (TABLESTORE_LONG=1 only;
// CI also runs go vet ./... by itself).
func TestVet(t *testing.T) {
	longChecks(t)
	goCmd(t, repoRoot(t), "vet", "./...")
}

// TestStaticcheck runs staticcheck, pinned as a tool in the root go.mod,
// over the root module (TABLESTORE_LONG=1 only).
func TestStaticcheck(t *testing.T) {
	longChecks(t)
	goCmd(t, repoRoot(t), "tool", "staticcheck", "./...")
}

// pkg is what go list says of one package.
type pkg struct {
	ImportPath   string
	Dir          string
	Imports      []string
	Deps         []string
	TestImports  []string
	XTestImports []string
	GoFiles      []string
}

// modules are the directories of the repository's modules.
var modules = []string{".", "azure", "bench", "cmd/tablestore", "compat", "examples/testing"}

// listPackages returns every package of every module of the repository.
func listPackages(t *testing.T) []pkg {
	t.Helper()
	root := repoRoot(t)
	var all []pkg
	for _, m := range modules {
		out := goCmd(t, filepath.Join(root, m), "list", "-e", "-json=ImportPath,Dir,Imports,Deps,TestImports,XTestImports,GoFiles", "./...")
		dec := json.NewDecoder(bytes.NewReader(out))
		for {
			var p pkg
			if err := dec.Decode(&p); err == io.EOF {
				break
			} else if err != nil {
				t.Fatalf("go list in %s: %v", m, err)
			}
			all = append(all, p)
		}
	}
	return all
}

// A layer rule: which packages it covers and what they may not import.
type layerRule struct {
	name string
	// applies reports whether the rule covers package path p.
	applies func(p string) bool
	// imports selects the imports the rule looks at.
	imports func(p pkg) []string
	// forbidden reports whether importing path q breaks the rule.
	forbidden func(q string) bool
}

func own(q string) bool { return q == module || strings.HasPrefix(q, module+"/") }

func isInternal(q string) bool { return strings.Contains(q+"/", "/internal/") && own(q) }

// belowAPI reports whether p is one of the packages the root is built on.
func belowAPI(p string) bool { return strings.HasPrefix(p, module+"/internal/") && !harness(p) }

// harness reports whether p is a test harness: it drives the public API
// from above, so it may import the root, but nothing below the API and no
// library package may import it.
func harness(p string) bool {
	return strings.HasPrefix(p, module+"/tablestoretest") || p == module+"/internal/lint"
}

func direct(p pkg) []string { return p.Imports }

func withTests(p pkg) []string {
	return slices.Concat(p.Imports, p.TestImports, p.XTestImports)
}

// library reports whether p is library code: what the root module ships
// to its users, apart from harnesses, programs and examples.
func library(p string) bool {
	if !own(p) || harness(p) {
		return false
	}
	for _, prefix := range []string{"/cmd/", "/bench", "/compat", "/examples"} {
		if strings.HasPrefix(p, module+prefix) {
			return false
		}
	}
	return true
}

// rootAPI is the package the root hands its server-only operations to.
const rootAPI = module + "/internal/rootapi"

var layerRules = []layerRule{
	{
		name:      "edm imports nothing of this module",
		applies:   func(p string) bool { return p == module+"/edm" },
		imports:   direct,
		forbidden: own,
	},
	{
		name:      "filter imports only edm",
		applies:   func(p string) bool { return p == module+"/filter" },
		imports:   direct,
		forbidden: func(q string) bool { return own(q) && q != module+"/edm" },
	},
	{
		name:      "internal packages below the API never import the root, even indirectly",
		applies:   belowAPI,
		imports:   func(p pkg) []string { return slices.Concat(p.Imports, p.Deps) },
		forbidden: func(q string) bool { return q == module },
	},
	{
		name:      "driver imports no internal package",
		applies:   func(p string) bool { return p == module+"/driver" },
		imports:   direct,
		forbidden: isInternal,
	},
	{
		name:      "the azure module imports no internal package, tests included",
		applies:   func(p string) bool { return strings.HasPrefix(p, module+"/azure") },
		imports:   withTests,
		forbidden: isInternal,
	},
	{
		name:      "the console uses only public packages",
		applies:   func(p string) bool { return strings.HasPrefix(p, module+"/console") },
		imports:   direct,
		forbidden: isInternal,
	},
	{
		// The command's one exception: "did you mean" for its commands,
		// flags and tables is internal/suggest, which the test kit's
		// fault names also use.
		name:      "the command uses only public packages and internal/suggest",
		applies:   func(p string) bool { return strings.HasPrefix(p, module+"/cmd/") },
		imports:   direct,
		forbidden: func(q string) bool { return isInternal(q) && q != module+"/internal/suggest" },
	},
	{
		// The exceptions to public packages only: Azure's wire format
		// (entity paths, the top-level scan of a body, JSON strings) has
		// its home in internal/wire, which the root also uses, so the
		// server reads it there rather than through root exports made for
		// it alone; and internal/rootapi is what the root offers the
		// server beyond its public API (see the next rule).
		name:      "the server uses only public packages, internal/wire and internal/rootapi",
		applies:   func(p string) bool { return strings.HasPrefix(p, module+"/server") },
		imports:   direct,
		forbidden: func(q string) bool { return isInternal(q) && q != module+"/internal/wire" && q != rootAPI },
	},
	{
		// internal/rootapi holds the root's operations for its server
		// (JSON straight from stored records, the service properties
		// document, transactions with Cosmos's Timestamps): only the root
		// that fills it in, the server, the model test that holds the
		// root's transactions to the model, and the bench module's floors
		// of the server's paths may use them.
		name: "only the root, the server, the model test and the bench floors import internal/rootapi, tests included",
		applies: func(p string) bool {
			return p != module && p != module+"/server" && p != module+"/bench" && p != module+"/tablestoretest/modeltest"
		},
		imports:   withTests,
		forbidden: func(q string) bool { return q == rootAPI },
	},
	{
		name:      "replicate is built on public packages only, tests included",
		applies:   func(p string) bool { return p == module+"/replicate" },
		imports:   withTests,
		forbidden: isInternal,
	},
	{
		name:      "library code never imports a test harness",
		applies:   library,
		imports:   direct,
		forbidden: harness,
	},
}

// layerViolations lists every import that breaks a rule.
func layerViolations(pkgs []pkg, rules []layerRule) []string {
	var bad []string
	for _, r := range rules {
		for _, p := range pkgs {
			if !r.applies(p.ImportPath) {
				continue
			}
			for _, q := range r.imports(p) {
				if r.forbidden(q) {
					bad = append(bad, r.name+": "+p.ImportPath+" imports "+q)
				}
			}
		}
	}
	slices.Sort(bad)
	return slices.Compact(bad)
}

// TestLayering holds the layering of design.md.
func TestLayering(t *testing.T) {
	pkgs := listPackages(t)
	if len(pkgs) < 20 {
		t.Fatalf("go list found %d packages; the repository has more", len(pkgs))
	}
	for _, v := range layerViolations(pkgs, layerRules) {
		t.Error(v)
	}
}

// TestLayeringRulesCatch checks that every layer rule reports an import
// that breaks it.
func TestLayeringRulesCatch(t *testing.T) {
	bad := []pkg{
		{ImportPath: module + "/edm", Imports: []string{module + "/filter"}},
		{ImportPath: module + "/filter", Imports: []string{"strings", module + "/internal/engine"}},
		{ImportPath: module + "/internal/plan", Deps: []string{"fmt", module}},
		{ImportPath: module + "/driver", Imports: []string{module + "/internal/engine"}},
		{ImportPath: module + "/azure", XTestImports: []string{module + "/internal/modeltest"}},
		{ImportPath: module + "/server", Imports: []string{module + "/internal/wire", module + "/internal/engine"}},
		{ImportPath: module + "/console", Imports: []string{module + "/internal/engine"}},
		{ImportPath: module + "/cmd/tablestore", Imports: []string{module + "/internal/wire"}},
		{ImportPath: module + "/replicate", TestImports: []string{module + "/internal/engine"}},
		{ImportPath: module, Imports: []string{module + "/tablestoretest/modeltest"}},
		{ImportPath: module + "/tablestoretest", TestImports: []string{rootAPI}},
	}
	got := layerViolations(bad, layerRules)
	for _, want := range []string{module + "/server imports " + module + "/internal/engine", module + "/cmd/tablestore imports " + module + "/internal/wire",
		module + "/tablestoretest imports " + rootAPI} {
		if !slices.ContainsFunc(got, func(v string) bool { return strings.HasSuffix(v, ": "+want) }) {
			t.Errorf("%s went unreported: %v", want, got)
		}
	}
	if slices.ContainsFunc(got, func(v string) bool { return strings.HasSuffix(v, "/server imports "+module+"/internal/wire") }) {
		t.Errorf("the server's one allowed internal import was reported: %v", got)
	}
	if !slices.ContainsFunc(got, func(v string) bool {
		return strings.HasSuffix(v, ": "+module+"/console imports "+module+"/internal/engine")
	}) {
		t.Errorf("the console importing an internal package went unreported: %v", got)
	}
	for _, r := range layerRules {
		if !slices.ContainsFunc(got, func(v string) bool { return strings.HasPrefix(v, r.name+":") }) {
			t.Errorf("rule %q caught nothing in %v", r.name, got)
		}
	}
	good := []pkg{
		{ImportPath: module + "/edm", Imports: []string{"time"}},
		{ImportPath: module + "/filter", Imports: []string{module + "/edm"}},
		{ImportPath: module + "/server", Imports: []string{module, module + "/internal/wire", rootAPI}},
		{ImportPath: module + "/bench", Imports: []string{module, rootAPI}},
		{ImportPath: module + "/tablestoretest/modeltest", Imports: []string{module, module + "/internal/model"}},
		{ImportPath: module + "/cmd/tablestore", Imports: []string{module, module + "/server", module + "/replicate"}},
		{ImportPath: module + "/replicate", Imports: []string{module, "golang.org/x/sync/errgroup"}},
		{ImportPath: module + "/console", Imports: []string{module, module + "/server", module + "/server/webguard", module + "/entitycsv"}},
	}
	if v := layerViolations(good, layerRules); len(v) != 0 {
		t.Errorf("allowed imports reported: %v", v)
	}
}

// sourceFile is one parsed non-test Go file.
type sourceFile struct {
	path string // relative to the repository
	pkg  string // import path
	file *ast.File
	fset *token.FileSet
}

// houseRule checks one file and reports each breach as "path:line: what".
type houseRule struct {
	name string
	// applies reports whether the rule covers the package.
	applies func(pkg string) bool
	check   func(f sourceFile, report func(pos token.Pos, what string))
}

// libraryOrHarness covers code that runs inside a user's process.
func libraryOrHarness(p string) bool { return library(p) || harness(p) }

func anyPackage(string) bool { return true }

// codeNames are the values of edm's Code constants, read from its source.
func codeNames(t *testing.T) map[string]bool {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, filepath.Join(repoRoot(t), "edm", "code.go"), nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	ast.Inspect(f, func(n ast.Node) bool {
		if vs, ok := n.(*ast.ValueSpec); ok {
			for _, v := range vs.Values {
				if lit, ok := v.(*ast.BasicLit); ok && lit.Kind == token.STRING {
					s, _ := strconv.Unquote(lit.Value)
					names[s] = true
				}
			}
		}
		return true
	})
	if len(names) < 20 {
		t.Fatalf("found %d codes in edm/code.go", len(names))
	}
	return names
}

func houseRules(codes map[string]bool) []houseRule {
	return []houseRule{
		{
			name:    "no log.Fatal, log.Panic or os.Exit in library code",
			applies: libraryOrHarness,
			check: func(f sourceFile, report func(token.Pos, string)) {
				ast.Inspect(f.file, func(n ast.Node) bool {
					sel, ok := n.(*ast.SelectorExpr)
					if !ok {
						return true
					}
					x, ok := sel.X.(*ast.Ident)
					if !ok {
						return true
					}
					if x.Name == "os" && sel.Sel.Name == "Exit" ||
						x.Name == "log" && (strings.HasPrefix(sel.Sel.Name, "Fatal") || strings.HasPrefix(sel.Sel.Name, "Panic")) {
						report(sel.Pos(), x.Name+"."+sel.Sel.Name)
					}
					return true
				})
			},
		},
		{
			name:    "no go:linkname",
			applies: anyPackage,
			check: func(f sourceFile, report func(token.Pos, string)) {
				for _, cg := range f.file.Comments {
					for _, c := range cg.List {
						if strings.HasPrefix(c.Text, "//go:linkname") {
							report(c.Pos(), c.Text)
						}
					}
				}
			},
		},
		{
			name:    "no forged runtime values (a struct of unsafe.Pointers shaped like an interface or slice header)",
			applies: anyPackage,
			check: func(f sourceFile, report func(token.Pos, string)) {
				ast.Inspect(f.file, func(n ast.Node) bool {
					st, ok := n.(*ast.StructType)
					if !ok {
						return true
					}
					pointers := 0
					for _, field := range st.Fields.List {
						if sel, ok := field.Type.(*ast.SelectorExpr); ok && sel.Sel.Name == "Pointer" {
							if x, ok := sel.X.(*ast.Ident); ok && x.Name == "unsafe" {
								pointers += max(len(field.Names), 1)
							}
						}
					}
					if pointers >= 2 {
						report(st.Pos(), "struct with "+strconv.Itoa(pointers)+" unsafe.Pointer fields")
					}
					return true
				})
			},
		},
		{
			// A handler returns its error; the dispatch (ServeHTTP, serve)
			// hands it to answer, the one writer of error responses.
			name:    "server handlers return errors: only ServeHTTP and serve call answer, and no fail",
			applies: func(p string) bool { return p == module+"/server" },
			check: func(f sourceFile, report func(token.Pos, string)) {
				for _, d := range f.file.Decls {
					fd, ok := d.(*ast.FuncDecl)
					if !ok || fd.Body == nil {
						continue
					}
					if fd.Name.Name == "fail" && fd.Recv != nil {
						report(fd.Pos(), "method fail")
					}
					if fd.Name.Name == "ServeHTTP" || fd.Name.Name == "serve" {
						continue
					}
					ast.Inspect(fd.Body, func(n ast.Node) bool {
						if call, ok := n.(*ast.CallExpr); ok {
							if sel, ok := call.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "answer" {
								report(call.Pos(), fd.Name.Name+" calls answer")
							}
						}
						return true
					})
				}
			},
		},
		{
			name:    "a public alias of another package's type is declared in the package's aliases.go",
			applies: func(p string) bool { return !isInternal(p) },
			check: func(f sourceFile, report func(token.Pos, string)) {
				if filepath.Base(f.path) == "aliases.go" {
					return
				}
				for _, ts := range foreignAliases(f.file) {
					report(ts.Pos(), "type "+ts.Name.Name)
				}
			},
		},
		{
			name:    "package filter re-exports nothing of another package",
			applies: func(p string) bool { return p == module+"/filter" },
			check: func(f sourceFile, report func(token.Pos, string)) {
				for _, ts := range foreignAliases(f.file) {
					report(ts.Pos(), "type "+ts.Name.Name)
				}
				for _, d := range f.file.Decls {
					gd, ok := d.(*ast.GenDecl)
					if !ok || gd.Tok != token.CONST && gd.Tok != token.VAR {
						continue
					}
					for _, spec := range gd.Specs {
						vs := spec.(*ast.ValueSpec)
						for i, name := range vs.Names {
							if i < len(vs.Values) && name.IsExported() && isQualified(vs.Values[i]) {
								report(name.Pos(), name.Name)
							}
						}
					}
				}
			},
		},
		{
			name:    "error codes are edm's constants, not string literals",
			applies: func(p string) bool { return libraryOrHarness(p) && p != module+"/edm" },
			check: func(f sourceFile, report func(token.Pos, string)) {
				ast.Inspect(f.file, func(n ast.Node) bool {
					if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING {
						if s, err := strconv.Unquote(lit.Value); err == nil && codes[s] {
							report(lit.Pos(), lit.Value)
						}
					}
					return true
				})
			},
		},
	}
}

// foreignAliases returns f's exported aliases of another package's types.
func foreignAliases(f *ast.File) []*ast.TypeSpec {
	var out []*ast.TypeSpec
	for _, d := range f.Decls {
		gd, ok := d.(*ast.GenDecl)
		if !ok || gd.Tok != token.TYPE {
			continue
		}
		for _, spec := range gd.Specs {
			ts := spec.(*ast.TypeSpec)
			if ts.Assign.IsValid() && ts.Name.IsExported() && isQualified(ts.Type) {
				out = append(out, ts)
			}
		}
	}
	return out
}

// isQualified reports whether e is a qualified identifier, pkg.Name.
func isQualified(e ast.Expr) bool {
	sel, ok := e.(*ast.SelectorExpr)
	if !ok {
		return false
	}
	_, ok = sel.X.(*ast.Ident)
	return ok
}

// houseViolations applies rules to files.
func houseViolations(files []sourceFile, rules []houseRule) []string {
	var bad []string
	for _, r := range rules {
		for _, f := range files {
			if !r.applies(f.pkg) {
				continue
			}
			r.check(f, func(pos token.Pos, what string) {
				bad = append(bad, r.name+": "+f.path+":"+strconv.Itoa(f.fset.Position(pos).Line)+": "+what)
			})
		}
	}
	return bad
}

// TestHouseRules parses every non-test Go file of the repository.
func TestHouseRules(t *testing.T) {
	root := repoRoot(t)
	fset := token.NewFileSet()
	var files []sourceFile
	for _, p := range listPackages(t) {
		for _, name := range p.GoFiles {
			path := filepath.Join(p.Dir, name)
			f, err := parser.ParseFile(fset, path, nil, parser.ParseComments)
			if err != nil {
				t.Fatal(err)
			}
			rel, _ := filepath.Rel(root, path)
			files = append(files, sourceFile{path: rel, pkg: p.ImportPath, file: f, fset: fset})
		}
	}
	if len(files) < 100 {
		t.Fatalf("parsed %d files; the repository has more", len(files))
	}
	for _, v := range houseViolations(files, houseRules(codeNames(t))) {
		t.Error(v)
	}
}

// TestHouseRulesCatch checks that every house rule reports a breach.
func TestHouseRulesCatch(t *testing.T) {
	const src = `package x

import (
	"log"
	"os"
	"unsafe"
)

//go:linkname nanotime runtime.nanotime
func nanotime() int64

type eface struct {
	typ, data unsafe.Pointer
}

func f() error {
	if false {
		os.Exit(1)
	}
	log.Fatalf("no")
	return code("TableNotFound")
}

type File = os.File
`
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "x.go", src, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	const serverSrc = `package server

func (q *request) getTable() {
	if q.missing() {
		q.answer(errNotFound)
		return
	}
}

func (q *request) fail(err error) {}
`
	sf, err := parser.ParseFile(fset, "server.go", serverSrc, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	ff, err := parser.ParseFile(fset, "filter/aliases.go", "package filter\n\nimport \"os\"\n\nconst ModeDir = os.ModeDir\n", 0)
	if err != nil {
		t.Fatal(err)
	}
	rules := houseRules(map[string]bool{"TableNotFound": true})
	got := houseViolations([]sourceFile{
		{path: "x.go", pkg: module + "/x", file: f, fset: fset},
		{path: "server.go", pkg: module + "/server", file: sf, fset: fset},
		{path: "filter/aliases.go", pkg: module + "/filter", file: ff, fset: fset},
	}, rules)
	for _, r := range rules {
		if !slices.ContainsFunc(got, func(v string) bool { return strings.HasPrefix(v, r.name+":") }) {
			t.Errorf("rule %q caught nothing in %v", r.name, got)
		}
	}
	if n := len(got); n != 9 {
		t.Errorf("got %d breaches, want 9 (os.Exit, log.Fatalf, linkname, eface, the code, answer in a handler, fail, the alias, filter's constant): %v", n, got)
	}
}

// sleepDirs are the directories whose tests wait on events, not on
// time.Sleep: a sleep there says why with a "// sleep: reason" comment at
// the end of its line (a random moment to kill a child at, a
// client's back-off, the polling interval of a condition with no event).
var sleepDirs = []string{".", "server", "console", "cmd/tablestore"}

// unexplainedSleeps reports the lines of the time.Sleep calls of f
// without a "// sleep:" comment on their line.
func unexplainedSleeps(fset *token.FileSet, f *ast.File) []int {
	reasons := map[int]bool{}
	for _, cg := range f.Comments {
		for _, c := range cg.List {
			if strings.HasPrefix(c.Text, "// sleep:") {
				reasons[fset.Position(c.Pos()).Line] = true
			}
		}
	}
	var lines []int
	ast.Inspect(f, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		sel, ok := call.Fun.(*ast.SelectorExpr)
		if !ok || sel.Sel.Name != "Sleep" {
			return true
		}
		if x, ok := sel.X.(*ast.Ident); !ok || x.Name != "time" {
			return true
		}
		line := fset.Position(call.Pos()).Line
		if !reasons[line] {
			lines = append(lines, line)
		}
		return true
	})
	return lines
}

// TestNoSleepInTests holds sleepDirs' tests to waiting on events.
func TestNoSleepInTests(t *testing.T) {
	root := repoRoot(t)
	fset := token.NewFileSet()
	files := 0
	for _, dir := range sleepDirs {
		paths, err := filepath.Glob(filepath.Join(root, dir, "*_test.go"))
		if err != nil {
			t.Fatal(err)
		}
		for _, path := range paths {
			f, err := parser.ParseFile(fset, path, nil, parser.ParseComments)
			if err != nil {
				t.Fatal(err)
			}
			files++
			rel, _ := filepath.Rel(root, path)
			for _, line := range unexplainedSleeps(fset, f) {
				t.Errorf("%s:%d: time.Sleep in a test without a \"// sleep: reason\" comment: wait on an event", rel, line)
			}
		}
	}
	if files < 50 {
		t.Fatalf("parsed %d test files; the repository has more", files)
	}
}

// TestNoSleepInTestsCatches checks the rule reports a bare sleep and
// passes one with a reason.
func TestNoSleepInTestsCatches(t *testing.T) {
	const src = `package x

import "time"

func f() {
	time.Sleep(time.Second)
	// sleep: a comment above does not count
	time.Sleep(time.Second)
	time.Sleep(time.Second) // sleep: a random moment
	time.Sleep(time.Millisecond) // a comment that gives no reason
}
`
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "x_test.go", src, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	if got := unexplainedSleeps(fset, f); !slices.Equal(got, []int{6, 8, 10}) {
		t.Errorf("unexplained sleeps at lines %v; want [6 8 10]", got)
	}
}
