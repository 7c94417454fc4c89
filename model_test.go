package tablestore_test

// TestModel runs tablestoretest/modeltest's seeded workload against the
// embedded engine in four configurations (one encrypted at rest). A failure prints the seed, the
// index of the operation and the path of the saved operation log; replay
// it with
//
//	go test -run 'TestModel/<config>' -seed=<seed> .
//
// (or TABLESTORE_SEED=<seed>), or replay the log itself with
// -modeltest.replay=<path>. TABLESTORE_MODEL_OPS sets the number of
// operations per configuration (default 3,000, 10,000 with
// TABLESTORE_LONG=1).

import (
	"flag"
	"os"
	"strconv"
	"testing"
	"time"

	ts "github.com/tablestore/tablestore"
	"github.com/tablestore/tablestore/tablestoretest/modeltest"
)

var seedFlag = flag.Int64("seed", 0, "seed of the randomized model and crash tests (0 picks one)")

// testSeed returns the seed from -seed, else from TABLESTORE_SEED, else a
// fresh one; it logs the seed so that every run can be replayed.
func testSeed(t *testing.T) int64 {
	seed := *seedFlag
	if seed == 0 {
		if s := os.Getenv("TABLESTORE_SEED"); s != "" {
			v, err := strconv.ParseInt(s, 10, 64)
			if err != nil {
				t.Fatalf("bad TABLESTORE_SEED %q: %v", s, err)
			}
			seed = v
		}
	}
	if seed == 0 {
		seed = time.Now().UnixNano()
	}
	t.Logf("seed %d", seed)
	return seed
}

// longEnv, set to 1, runs the long versions of the tests that scale:
// more model operations and more kill cycles (see docs/testing.md). The
// default versions are short enough for go test ./... on two cores and
// still cover every configuration and kind of crash.
const longEnv = "TABLESTORE_LONG"

// scaled returns long when $TABLESTORE_LONG is 1, else short.
func scaled(short, long int) int {
	if os.Getenv(longEnv) == "1" {
		return long
	}
	return short
}

// envInt returns the integer in environment variable name, or def.
func envInt(t *testing.T, name string, def int) int {
	s := os.Getenv(name)
	if s == "" {
		return def
	}
	v, err := strconv.Atoi(s)
	if err != nil || v <= 0 {
		t.Fatalf("bad %s %q", name, s)
	}
	return v
}

// modelConfig is one way of running the embedded engine under the
// workload.
type modelConfig struct {
	name     string
	onDisk   bool
	reopens  int // Close and reopen this many times, evenly spread
	memTable uint64
	scanCap  int // Options.PageScanLimit
	noSync   bool
	bigValue bool
	encrypt  bool // Options.Encryption on
	distinct bool // transactions with DistinctTimestamps
}

func TestModel(t *testing.T) {
	seed := testSeed(t)
	ops := envInt(t, "TABLESTORE_MODEL_OPS", scaled(3_000, 10_000))
	configs := []modelConfig{
		{name: "InMemory", scanCap: 7},
		{name: "OnDisk", onDisk: true, reopens: 2, memTable: 64 << 10, bigValue: true},
		{name: "OnDiskNoSync", onDisk: true, noSync: true, reopens: 3, scanCap: 3, distinct: true},
		{name: "OnDiskEncrypted", onDisk: true, reopens: 2, memTable: 64 << 10, scanCap: 5, encrypt: true, distinct: true},
	}
	for _, cfg := range configs {
		t.Run(cfg.name, func(t *testing.T) {
			dir := ""
			if cfg.onDisk {
				dir = t.TempDir()
			}
			open := func(t *testing.T, clock func() time.Time) *ts.DB {
				opts := &ts.Options{MemTableSize: cfg.memTable, PageScanLimit: cfg.scanCap, Clock: clock, NoSync: cfg.noSync}
				if cfg.encrypt {
					opts.Encryption = &ts.Encryption{Key: encKey(9)}
				}
				var db *ts.DB
				var err error
				if cfg.onDisk {
					db, err = ts.Open(dir, opts)
				} else {
					db, err = ts.OpenInMemory(opts)
				}
				if err != nil {
					t.Fatalf("open: %v", err)
				}
				return db
			}
			modeltest.Run(t, open, modeltest.Config{
				Name: cfg.name, Seed: seed, Ops: ops, Reopens: cfg.reopens, BigValue: cfg.bigValue, Dir: dir,
				DistinctTimestamps: cfg.distinct,
			})
		})
	}
}
