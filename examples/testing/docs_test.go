package orders

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

// exampleBlock is a code block of docs/testing.md that includes a file
// verbatim: a marker line naming the file, then the fenced block.
var exampleBlock = regexp.MustCompile("(?s)<!-- example: (\\S+) -->\n```\\w*\n(.*?)```\n")

// TestDocExamples holds docs/testing.md's language examples to the files
// CI runs (this module's tests, clients/python/examples under pytest,
// clients/js/examples under node --test): each must be its file exactly.
func TestDocExamples(t *testing.T) {
	root := filepath.Join("..", "..")
	doc, err := os.ReadFile(filepath.Join(root, "docs", "testing.md"))
	if err != nil {
		t.Fatal(err)
	}
	blocks := exampleBlock.FindAllSubmatch(doc, -1)
	if len(blocks) < 3 {
		t.Fatalf("docs/testing.md has %d example blocks, want one each for Go, Python and JavaScript", len(blocks))
	}
	for _, b := range blocks {
		name := string(b[1])
		file, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(name)))
		if err != nil {
			t.Errorf("docs/testing.md includes %s: %v", name, err)
			continue
		}
		if string(file) != string(b[2]) {
			t.Errorf("docs/testing.md's block for %s differs from the file: copy the file into the doc", name)
		}
	}
}
