package examples_test

import (
	"context"
	"go/build"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// programs lists the example directories: every directory under
// examples/ holding a main.go, except internal/.
func programs(t *testing.T) []string {
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		if !e.IsDir() || e.Name() == "internal" || e.Name() == "testdata" {
			continue
		}
		if _, err := os.Stat(filepath.Join(e.Name(), "main.go")); err == nil {
			names = append(names, e.Name())
		}
	}
	if len(names) == 0 {
		t.Fatal("found no example programs")
	}
	return names
}

func goTool() string {
	if p, err := exec.LookPath("go"); err == nil {
		return p
	}
	return filepath.Join(build.Default.GOROOT, "bin", "go")
}

// TestExamples builds every example program once and runs each one; an
// example exits non-zero when what it demonstrates does not hold.
func TestExamples(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs every example program")
	}
	names := programs(t)
	bin := t.TempDir()
	buildCtx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	build := exec.CommandContext(buildCtx, goTool(), "build", "-ldflags=-s -w", "-o", bin+string(filepath.Separator), "./...")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./examples/...: %v\n%s", err, out)
	}
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			exe := filepath.Join(bin, name)
			if runtime.GOOS == "windows" {
				exe += ".exe"
			}
			if _, err := os.Stat(exe); err != nil {
				t.Fatalf("no binary for %s: %v", name, err)
			}
			// Parallel subtests run after this function returns, so each
			// gets its own deadline rather than one derived from buildCtx.
			runCtx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			out, err := exec.CommandContext(runCtx, exe).CombinedOutput()
			if err != nil {
				t.Fatalf("%s failed: %v\n%s", name, err, out)
			}
			if !strings.Contains(string(out), "ok: every expectation held") {
				t.Fatalf("%s exited 0 without its final ok line:\n%s", name, out)
			}
			if testing.Verbose() {
				t.Logf("%s output:\n%s", name, out)
			}
		})
	}
}
