// Package demo holds the few things every example program shares: a store
// in a temporary directory that is removed on exit, step printing, the plan
// kind of a query, and checks that end the program with status 1 when what
// the example shows does not hold.
//
// The helpers are for one goroutine (the program's main); they are not
// safe for concurrent use.
package demo

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/tablestore/tablestore"
)

// cleanups run, newest first, when the program ends through Done or Fail.
var cleanups []func()

// Defer registers f to run when the program ends through Done or Fail.
func Defer(f func()) { cleanups = append(cleanups, f) }

func runCleanups() {
	for i := len(cleanups) - 1; i >= 0; i-- {
		cleanups[i]()
	}
	cleanups = nil
}

// TempDir creates an empty directory that Done or Fail removes.
func TempDir() string {
	dir, err := os.MkdirTemp("", "tablestore-example-")
	if err != nil {
		Fail("create temporary directory: %v", err)
	}
	Defer(func() { os.RemoveAll(dir) })
	return dir
}

// Open opens a new store in a fresh temporary directory and returns it
// with the directory, for programs that reopen the store. Done or Fail
// closes the store and removes the directory.
func Open() (*tablestore.DB, string) {
	dir := TempDir()
	return Reopen(dir), dir
}

// Reopen opens the store in dir (or the remote store TABLESTORE_DRIVER
// names, see driver.go); Done or Fail closes it unless the program closed
// it first.
func Reopen(dir string) *tablestore.DB {
	db, err := openStore(dir)
	if err != nil {
		Fail("open store in %s: %v", dir, err)
	}
	Defer(func() { db.Close() })
	return db
}

// CreateTable creates a table or ends the program.
func CreateTable(ctx context.Context, db *tablestore.DB, name string) *tablestore.Table {
	t, err := db.CreateTable(ctx, name)
	NoErr(err, "create table "+name)
	return t
}

// Step prints the heading of one step of an example.
func Step(format string, args ...any) {
	fmt.Printf("\n== %s\n", fmt.Sprintf(format, args...))
}

// Say prints one indented line of output.
func Say(format string, args ...any) {
	fmt.Printf("   %s\n", fmt.Sprintf(format, args...))
}

// Fail prints why the example does not hold, runs the cleanups and exits
// with status 1.
func Fail(format string, args ...any) {
	fmt.Printf("FAIL: %s\n", fmt.Sprintf(format, args...))
	runCleanups()
	os.Exit(1)
}

// Done runs the cleanups and prints the final line of a passing example.
func Done() {
	runCleanups()
	fmt.Println("\nok: every expectation held")
}

// Check fails the program with the message unless ok.
func Check(ok bool, format string, args ...any) {
	if !ok {
		Fail(format, args...)
	}
}

// NoErr fails the program if err is not nil; what names the operation.
func NoErr(err error, what string) {
	if err != nil {
		Fail("%s: unexpected error: %v", what, err)
	}
}

// WantErr fails the program unless errors.Is(err, target), and prints the
// error the operation returned.
func WantErr(err, target error, what string) {
	if err == nil {
		Fail("%s: succeeded, want error %v", what, target)
	}
	if !errors.Is(err, target) {
		Fail("%s: got error %v, want %v", what, err, target)
	}
	Say("%s -> %s (as expected)", what, tablestore.ErrorCode(err))
}

// The plan kinds a query can run as, from cheapest to dearest.
const (
	Point         = "point"
	Range         = "range"
	PartitionScan = "partition scan"
	TableScan     = "table scan"
)

// PlanKind returns the kind of plan q runs as: one of Point, Range,
// PartitionScan, TableScan, or "empty" when the filter rules out every key.
func PlanKind(t *tablestore.Table, q tablestore.Query) string {
	p, err := t.Plan(context.Background(), q)
	NoErr(err, "plan "+describe(q))
	return p.Kind.String()
}

// ExpectPlan prints the plan kind of q and fails unless it is want.
func ExpectPlan(t *tablestore.Table, q tablestore.Query, want string) {
	got := PlanKind(t, q)
	Say("plan %-14s for %s", got, describe(q))
	Check(got == want, "query %s on %s runs as %q, want %q", describe(q), t.Name(), got, want)
}

// All runs q with ExpectPlan and returns every matching entity, across
// pages.
func All(ctx context.Context, t *tablestore.Table, q tablestore.Query, wantPlan string) []*tablestore.Entity {
	ExpectPlan(t, q, wantPlan)
	var out []*tablestore.Entity
	for e, err := range t.Query(ctx, q) {
		NoErr(err, "query "+describe(q))
		out = append(out, e)
	}
	return out
}

// RowKeys lists the RowKeys of es in order.
func RowKeys(es []*tablestore.Entity) []string {
	keys := make([]string, len(es))
	for i, e := range es {
		keys[i] = e.RowKey
	}
	return keys
}

// Get reads one entity or fails the program.
func Get(ctx context.Context, t *tablestore.Table, pk, rk string) *tablestore.Entity {
	e, err := t.Get(ctx, pk, rk, nil)
	NoErr(err, fmt.Sprintf("get (%s, %s) from %s", pk, rk, t.Name()))
	return e
}

func describe(q tablestore.Query) string {
	s := "$filter=" + q.Filter
	if q.Filter == "" {
		s = "(no filter)"
	}
	if q.Select != nil {
		s += " $select=" + strings.Join(q.Select, ",")
	}
	if q.Top != 0 {
		s += fmt.Sprintf(" $top=%d", q.Top)
	}
	if q.Index != "" {
		s += " through index " + q.Index
	}
	return s
}

// CheckStore checks db (DB.Check) and fails the program on damage. On a
// store whose driver cannot check its data (a remote store, even one
// served by tablestore) it says so and returns false.
func CheckStore(ctx context.Context, db *tablestore.DB) bool {
	rep, err := db.Check(ctx)
	if errors.Is(err, tablestore.ErrNotImplemented) {
		Say("this store's driver cannot check its data (a remote store): skipping the check")
		return false
	}
	NoErr(err, "check the store")
	Check(len(rep.Damaged) == 0, "check found damage: %+v", rep.Damaged)
	return true
}

// CreateIndex creates a native secondary index of t and prints it. On a
// store that keeps none (the remote Azure driver) it says so and returns
// false, so the program can skip what needs the index.
func CreateIndex(ctx context.Context, t *tablestore.Table, spec tablestore.IndexSpec) bool {
	err := t.CreateIndex(ctx, spec)
	if errors.Is(err, tablestore.ErrNotImplemented) {
		Say("this store keeps no native secondary indexes: skipping the native version")
		return false
	}
	NoErr(err, "create index "+spec.Name)
	var opts []string
	if spec.Partitioned {
		opts = append(opts, "partitioned")
	}
	if spec.Unique {
		opts = append(opts, "unique")
	}
	s := ""
	if len(opts) > 0 {
		s = ", " + strings.Join(opts, ", ")
	}
	Say("created index %s on %s (%s%s)", spec.Name, t.Name(), strings.Join(spec.Properties, ", "), s)
	return true
}

// Explain prints q's plan as Table.Explain writes it, indented, and
// returns it.
func Explain(t *tablestore.Table, q tablestore.Query) *tablestore.QueryPlan {
	p, err := t.Plan(context.Background(), q)
	NoErr(err, "plan "+describe(q))
	Say("explain %s:", describe(q))
	for _, line := range strings.Split(strings.TrimRight(p.String(), "\n"), "\n") {
		Say("  %s", line)
	}
	return p
}

// ViaIndex runs q, printing its plan, and fails unless the plan reads the
// native index named index. It returns every matching entity, after
// printing how many index entries and entities the pages read.
func ViaIndex(ctx context.Context, t *tablestore.Table, q tablestore.Query, index string) []*tablestore.Entity {
	p := Explain(t, q)
	Check(strings.EqualFold(p.Index, index), "query %s on %s reads index %q, want %q", describe(q), t.Name(), p.Index, index)
	var out []*tablestore.Entity
	entries, examined := 0, 0
	for {
		page, err := t.QueryPage(ctx, q)
		NoErr(err, "query "+describe(q))
		out = append(out, page.Entities...)
		entries += page.IndexEntries
		examined += page.Examined
		if page.Continuation == "" {
			break
		}
		q.Continuation = page.Continuation
	}
	Say("read %d index entries, examined %d entities, returned %d", entries, examined, len(out))
	return out
}
