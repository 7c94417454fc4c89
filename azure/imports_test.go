package azure

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestPublicImportsOnly holds the rule that lets this module be upgraded
// apart from the root module: its non-test code uses only the root
// module's public packages (tablestore, driver, edm, filter), never an
// internal one, whose API may change in any release.
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
			if strings.HasPrefix(path, "github.com/tablestore/tablestore/") && strings.Contains(path, "/internal") {
				t.Errorf("%s imports %s", f, path)
			}
		}
		checked++
	}
	if checked < 5 {
		t.Fatalf("checked %d files; expected the package's sources", checked)
	}
}
