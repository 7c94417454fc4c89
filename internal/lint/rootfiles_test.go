package lint

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// rootBase are the root package's files that every other file of it
// builds on, lowest first: each refers by name only to those listed
// before it, never to a file of the package's features (tables,
// queries, backups, encryption, ...). The types of Options' fields live
// in options.go for that reason.
var rootBase = []string{"aliases.go", "errors.go", "options.go"}

// upwardRefs parses files (name to source) of one package and reports
// each package-level name that a file of base uses but a file not
// listed before it in base declares, as "file: name (other file)".
func upwardRefs(files map[string]string, base []string) ([]string, error) {
	fset := token.NewFileSet()
	parsed := map[string]*ast.File{}
	declaredIn := map[string]string{}
	for name, src := range files {
		f, err := parser.ParseFile(fset, name, src, 0)
		if err != nil {
			return nil, err
		}
		parsed[name] = f
		for _, d := range f.Decls {
			for _, n := range declaredNames(d) {
				declaredIn[n] = name
			}
		}
	}
	var bad []string
	for i, name := range base {
		f := parsed[name]
		if f == nil {
			continue
		}
		// Names a file resolves itself (locals, parameters, its own
		// declarations) are not references to other files; the parser's
		// resolution leaves the others in Unresolved.
		for _, id := range f.Unresolved {
			other, ok := declaredIn[id.Name]
			if ok && other != name && !slices.Contains(base[:i], other) {
				bad = append(bad, name+": "+id.Name+" ("+other+")")
			}
		}
	}
	slices.Sort(bad)
	return slices.Compact(bad), nil
}

// declaredNames are the package-level names a declaration introduces;
// methods introduce none.
func declaredNames(d ast.Decl) []string {
	var names []string
	switch d := d.(type) {
	case *ast.FuncDecl:
		if d.Recv == nil {
			names = append(names, d.Name.Name)
		}
	case *ast.GenDecl:
		for _, spec := range d.Specs {
			switch s := spec.(type) {
			case *ast.TypeSpec:
				names = append(names, s.Name.Name)
			case *ast.ValueSpec:
				for _, n := range s.Names {
					names = append(names, n.Name)
				}
			}
		}
	}
	return names
}

// TestRootBaseFiles holds rootBase: errors.go and options.go refer to no
// feature file of the root.
func TestRootBaseFiles(t *testing.T) {
	root := repoRoot(t)
	paths, err := filepath.Glob(filepath.Join(root, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{}
	for _, p := range paths {
		if !strings.HasSuffix(p, "_test.go") {
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			files[filepath.Base(p)] = string(b)
		}
	}
	for _, name := range rootBase {
		if _, ok := files[name]; !ok {
			t.Fatalf("the root has no %s", name)
		}
	}
	bad, err := upwardRefs(files, rootBase)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range bad {
		t.Errorf("%s: a base file of the root refers to a feature file; move the name to the layer it belongs to", b)
	}
}

// TestRootBaseFilesCatches checks the rule reports a base file naming a
// feature file's type, function or constant, and passes references down
// the list, locals and methods.
func TestRootBaseFilesCatches(t *testing.T) {
	files := map[string]string{
		"aliases.go": "package x\n\ntype Code = string\n",
		"errors.go": `package x

type Error struct{ Code Code }

func keyError(id string) error { return ErrEncryptionKey }

func local() { Table := 1; _ = Table }
`,
		"options.go": `package x

type Options struct{ Backup *ContinuousBackup }

func (o *Options) check() error { return &Error{} }

func (o *Options) keys() { o.Encryption.keys() }
`,
		"encryption.go": "package x\n\nvar ErrEncryptionKey error\n\nfunc (e *Enc) keys() {}\n",
		"backup.go":     "package x\n\ntype ContinuousBackup struct{}\n",
		"table.go":      "package x\n\ntype Table struct{ o Options; e Error }\n",
	}
	got, err := upwardRefs(files, rootBase)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"errors.go: ErrEncryptionKey (encryption.go)", "options.go: ContinuousBackup (backup.go)"}
	if !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}
