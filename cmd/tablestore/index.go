package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"strings"
	"time"

	"github.com/tablestore/tablestore"
)

func indexCommand() *command {
	return &command{
		name:    "index",
		args:    "create TABLE NAME PROPERTY... | drop TABLE NAME | list [TABLE]",
		summary: "create, drop or list a table's secondary indexes",
		help: `index create declares a secondary index NAME of TABLE on 1 to 4 user
properties, in order, and builds it from the table's entities, returning
once it is ready: on a terminal a live line shows the build's progress.
--unique refuses two entities with the same values (within each partition
with --partitioned); --partitioned orders the entries within each
partition, so only queries inside partitions use the index. Interrupting
the build (Ctrl-C) removes the index.

index drop removes an index at once, whatever it holds. index list prints
the indexes of TABLE (of every table without one): properties, options,
state, a building index's progress, and its estimated entries and bytes,
read from the store's metadata like stats' estimates.

--store takes a directory or the connection string of a tablestore server,
which builds the index (Azure has no secondary indexes).

Queries use a ready index by themselves where it keeps the result's key
order; explain shows when they do.`,
		example: `tablestore index create --store data People ByEmail Email --unique
tablestore index create --store data Orders ByStatus Status Created --partitioned
tablestore index list --store data
tablestore index drop --store data People ByEmail`,
		flags: func(fs *flag.FlagSet, io *stdio) func(context.Context, []string) error {
			store := storeFlag(fs)
			partitioned := fs.Bool("partitioned", false, "create: order entries within each partition (a local index)")
			unique := fs.Bool("unique", false, "create: refuse two entities with the same values")
			asJSON := fs.Bool("json", false, "list: one JSON object per index")
			return func(ctx context.Context, args []string) (err error) {
				if len(args) == 0 {
					return usagef("want create, drop or list")
				}
				verb, rest := args[0], args[1:]
				switch verb {
				case "create":
					if len(rest) < 3 {
						return usagef("want TABLE NAME PROPERTY... after create")
					}
				case "drop", "rm", "delete":
					if err := wantArgs(rest, 2, 2, "TABLE NAME after "+verb); err != nil {
						return err
					}
				case "list", "ls":
					if err := wantArgs(rest, 0, 1, "at most one TABLE"); err != nil {
						return err
					}
				default:
					return usagef("unknown index action %q: want create, drop or list", verb)
				}
				if verb != "create" && (*partitioned || *unique) {
					return usagef("--partitioned and --unique go with create")
				}
				db, err := openStore(*store, nil)
				if err != nil {
					return err
				}
				defer closeStore(db, &err)
				switch verb {
				case "create":
					spec := tablestore.IndexSpec{Name: rest[1], Properties: rest[2:], Partitioned: *partitioned, Unique: *unique}
					return createIndex(ctx, io, db.Table(rest[0]), spec)
				case "list", "ls":
					return listIndexes(ctx, io, db, rest, *asJSON)
				default:
					return db.Table(rest[0]).DropIndex(ctx, rest[1])
				}
			}
		},
	}
}

// createIndex builds spec's index on t, showing the build's progress, and
// prints a summary line when it is ready.
func createIndex(ctx context.Context, io *stdio, t *tablestore.Table, spec tablestore.IndexSpec) error {
	prog := startProgress(io, "index "+spec.Name, 0, 0)
	done := make(chan error, 1)
	go func() { done <- t.CreateIndex(ctx, spec) }()
	tick := time.NewTicker(progressEvery / 2)
	defer tick.Stop()
	for {
		select {
		case err := <-done:
			if err != nil {
				prog.abort()
				return err
			}
			// A final reading: the figures of the build just ended.
			if in, err := findIndex(ctx, t, spec.Name); err == nil && in != nil {
				prog.set(in.Done, in.Total)
			}
			prog.finish(fmt.Sprintf("index %s ready: %s", spec.Name, prog.summary()))
			return nil
		case <-tick.C:
			if in, err := findIndex(ctx, t, spec.Name); err == nil && in != nil {
				prog.set(in.Done, in.Total)
			}
		}
	}
}

// findIndex returns t's index named name, nil when it has none.
func findIndex(ctx context.Context, t *tablestore.Table, name string) (*tablestore.IndexInfo, error) {
	infos, err := t.Indexes(ctx)
	if err != nil {
		return nil, err
	}
	for i := range infos {
		if strings.EqualFold(infos[i].Name, name) {
			return &infos[i], nil
		}
	}
	return nil, nil
}

// indexRow is one line of index list.
type indexRow struct {
	Table            string   `json:"table"`
	Name             string   `json:"name"`
	Properties       []string `json:"properties"`
	Partitioned      bool     `json:"partitioned"`
	Unique           bool     `json:"unique"`
	State            string   `json:"state"`
	Done             int64    `json:"done"`
	Total            int64    `json:"total"`
	EstimatedEntries int64    `json:"estimatedEntries"`
	EstimatedBytes   int64    `json:"estimatedBytes"`
}

func newIndexRow(table string, in tablestore.IndexInfo) indexRow {
	return indexRow{Table: table, Name: in.Name, Properties: in.Properties, Partitioned: in.Partitioned, Unique: in.Unique,
		State: in.State.String(), Done: in.Done, Total: in.Total, EstimatedEntries: in.Entries, EstimatedBytes: in.Bytes}
}

// listIndexes prints the indexes of the named tables (every table when
// none).
func listIndexes(ctx context.Context, io *stdio, db *tablestore.DB, tables []string, asJSON bool) (err error) {
	all := len(tables) == 0
	if all {
		for name, err := range db.TableNames(ctx, "") {
			if err != nil {
				return err
			}
			tables = append(tables, name)
		}
	}
	var rows []indexRow
	for _, name := range tables {
		infos, err := db.Table(name).Indexes(ctx)
		if err != nil {
			return err
		}
		for _, in := range infos {
			rows = append(rows, newIndexRow(name, in))
		}
	}
	out := bufio.NewWriter(io.stdout)
	defer func() {
		if ferr := out.Flush(); err == nil {
			err = ferr
		}
	}()
	if asJSON {
		enc := json.NewEncoder(out)
		for _, r := range rows {
			if err := enc.Encode(r); err != nil {
				return err
			}
		}
		return nil
	}
	if len(rows) == 0 {
		if all {
			fmt.Fprintln(out, "(no indexes)")
		} else {
			fmt.Fprintf(out, "(table %s has no indexes)\n", tables[0])
		}
		return nil
	}
	cells := [][]string{{"TABLE", "INDEX", "PROPERTIES", "PARTITIONED", "UNIQUE", "STATE", "PROGRESS", "ENTRIES", "BYTES"}}
	for _, r := range rows {
		cells = append(cells, []string{r.Table, r.Name, strings.Join(r.Properties, ","), yesNo(r.Partitioned), yesNo(r.Unique),
			r.State, buildProgress(r), "~" + count(r.EstimatedEntries), "~" + size(r.EstimatedBytes)})
	}
	writeAligned(out, cells)
	fmt.Fprintln(out, statsFootnote)
	return nil
}

// buildProgress describes a building index's progress, "-" once ready.
func buildProgress(r indexRow) string {
	if r.State != tablestore.IndexBuilding.String() {
		return "-"
	}
	if r.Total <= 0 {
		return count(r.Done)
	}
	pct := min(100, int(100*r.Done/r.Total))
	return fmt.Sprintf("%s of %s (%d%%)", count(r.Done), count(r.Total), pct)
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}
