package driver

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestPublicImportsOnly holds the rule that makes a driver writable
// outside this repository: the package's non-test code imports nothing
// internal to the module, so every type in its API is public.
func TestPublicImportsOnly(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		ast, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range ast.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			if strings.Contains(path, "/internal/") || strings.HasSuffix(path, "/internal") {
				t.Errorf("%s imports %s", f, path)
			}
			if path == "github.com/tablestore/tablestore" {
				t.Errorf("%s imports the root package", f)
			}
		}
		checked++
	}
	if checked < 4 {
		t.Fatalf("checked %d files; expected the package's sources", checked)
	}
}
