package examples_test

import (
	"context"
	"go/build"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
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

// shortSet are the examples the default run builds and runs: the API
// tour, a reverse tail, paging with tokens and an HTTP
// service. Linking a program is most of the cost, so TABLESTORE_LONG=1
// runs every one.
var shortSet = []string{"quickstart", "logtail", "paging", "httpservice"}

// TestExamples builds example programs once and runs each one; an
// example exits non-zero when what it demonstrates does not hold. It
// runs shortSet, or with TABLESTORE_LONG=1 every program.
func TestExamples(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the example programs")
	}
	names := programs(t)
	pkgs := []string{"./..."}
	if os.Getenv("TABLESTORE_LONG") != "1" {
		for _, n := range shortSet {
			if !slices.Contains(names, n) {
				t.Fatalf("shortSet names %s, which is no example program", n)
			}
		}
		names, pkgs = shortSet, nil
		for _, n := range names {
			pkgs = append(pkgs, "./"+n)
		}
	}
	bin := t.TempDir()
	buildCtx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	args := append([]string{"build", "-ldflags=-s -w", "-o", bin + string(filepath.Separator)}, pkgs...)
	build := exec.CommandContext(buildCtx, goTool(), args...)
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build %s: %v\n%s", strings.Join(pkgs, " "), err, out)
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
