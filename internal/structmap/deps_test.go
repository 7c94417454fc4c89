package structmap

import (
	"os/exec"
	"strings"
	"testing"
)

// TestNoJSON holds the struct mapping apart from JSON: neither this
// package nor anything it imports is encoding/json or the wire format, so
// the typed read and write paths never enter JSON code.
func TestNoJSON(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}", ".").Output()
	if err != nil {
		t.Skipf("go list: %v", err)
	}
	deps := strings.Fields(string(out))
	if len(deps) == 0 {
		t.Fatal("go list listed no dependency")
	}
	for _, dep := range deps {
		if dep == "encoding/json" || strings.HasSuffix(dep, "/internal/wire") || dep == "github.com/tablestore/tablestore" {
			t.Errorf("structmap depends on %s", dep)
		}
	}
}
