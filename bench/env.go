package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
)

// env holds the stores of one run: per side, a "main" store opened
// without sync that holds the data set read workloads use, and a
// "synced" store for the synced write workloads, so that writes do not
// change the data set and each store has a single sync setting.
type env struct {
	ctx       context.Context
	sc        scale
	dataDir   string
	cacheSize int64
	blockSize int // 0: Pebble's default
	main      map[string]store
	synced    map[string]store
	// loaded records which sides' main stores hold the full data set.
	loaded map[string]bool
	// allocs counts the current round's allocations; runWorkload resets
	// it before each round.
	allocs allocMeter
}

func newEnv(ctx context.Context, sc scale, dataDir string, cacheSize int64, blockSize int) *env {
	return &env{ctx: ctx, sc: sc, dataDir: dataDir, cacheSize: cacheSize, blockSize: blockSize,
		main: map[string]store{}, synced: map[string]store{}, loaded: map[string]bool{}}
}

func (e *env) open(side string, sync bool) (store, error) {
	m, kind := e.main, "main"
	if sync {
		m, kind = e.synced, "synced"
	}
	if s, ok := m[side]; ok {
		return s, nil
	}
	dir := filepath.Join(e.dataDir, side+"-"+kind)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	s, err := safeOpen(side, dir, e.settings(sync))
	if err != nil {
		return nil, fmt.Errorf("open %s store: %w", kind, err)
	}
	m[side] = s
	return s, nil
}

// settings returns the settings every store of the run is opened with.
func (e *env) settings(sync bool) storeSettings {
	return storeSettings{sync: sync, cacheSize: e.cacheSize, blockSize: e.blockSize}
}

// mainStore returns side's main store, which must hold the data set.
func (e *env) mainStore(side string) (store, error) {
	if !e.loaded[side] {
		return nil, fmt.Errorf("data set not loaded")
	}
	return e.open(side, false)
}

// closeAll closes every store, reporting failures on stderr.
func (e *env) closeAll() {
	for _, m := range []map[string]store{e.main, e.synced} {
		for side, s := range m {
			if err := safeClose(s); err != nil {
				logf("close %s: %v", side, err)
			}
		}
	}
}

// safeOpen opens a store, turning a panic (an engine piece that has not
// landed yet) into an error.
func safeOpen(side, dir string, s storeSettings) (st store, err error) {
	defer recoverInto(&err)
	return openStore(side, dir, s)
}

func safeClose(s store) (err error) {
	defer recoverInto(&err)
	return s.close()
}

// recoverInto turns a panic into an error stored in *err.
func recoverInto(err *error) {
	if r := recover(); r != nil {
		if os.Getenv("BENCH_PANIC_STACK") != "" {
			fmt.Fprintf(stderr, "panic: %v\n%s\n", r, debug.Stack())
		}
		*err = fmt.Errorf("panic: %v", r)
	}
}

// commandLine is the shell command that runs this program as prefix
// args, each argument that is empty or holds a space or a shell
// character single-quoted, so a results file's command can be pasted.
func commandLine(prefix string, args []string) string {
	var b strings.Builder
	b.WriteString(prefix)
	for _, a := range args {
		b.WriteByte(' ')
		if a != "" && !strings.ContainsAny(a, " \t\n'\"\\$`!*?[]{}()<>|&;#~") {
			b.WriteString(a)
			continue
		}
		b.WriteString("'" + strings.ReplaceAll(a, "'", `'\''`) + "'")
	}
	return b.String()
}
