package azure_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/tablestore/tablestore/tablestoretest"
	"github.com/tablestore/tablestore/tablestoretest/azurite"
)

// TestExamples builds every program of ../examples with the remote driver
// (tag tablestore_azure) and runs each against a fresh tablestore server
// through TABLESTORE_DRIVER=azure. TABLESTORE_EXAMPLES_AZURITE=1 runs them
// against Azurite instead (one process per example; Azurite's own bugs,
// listed in the README, fail some of them).
func TestExamples(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs every example program")
	}
	bin := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	build := exec.CommandContext(ctx, "go", "build", "-tags", "tablestore_azure", "-o", bin+string(filepath.Separator), "./examples/...")
	build.Dir = ".."
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build -tags tablestore_azure ./examples/...: %v\n%s", err, out)
	}
	entries, err := os.ReadDir(bin)
	if err != nil || len(entries) == 0 {
		t.Fatalf("no example programs built: %v", err)
	}
	for _, e := range entries {
		t.Run(e.Name(), func(t *testing.T) {
			var cs string
			if os.Getenv("TABLESTORE_EXAMPLES_AZURITE") != "" {
				cs = azurite.Start(t)
			} else {
				cs = tablestoretest.NewServer(t).ConnectionString()
			}
			rctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(rctx, filepath.Join(bin, e.Name()))
			cmd.Env = append(os.Environ(), "TABLESTORE_DRIVER=azure", "TABLESTORE_CONNECTION_STRING="+cs)
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("%s: %v\n%s", e.Name(), err, out)
			}
		})
	}
}
