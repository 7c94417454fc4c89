package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/tablestore/tablestore"
)

func statsCommand() *command {
	return &command{
		name:    "stats",
		args:    "[TABLE...]",
		summary: "estimate entities and bytes per table",
		help: `stats prints, for each named table (every table without names), an estimate
of its entities and of the disk space its data takes, in bounded time
whatever the table's size: up to 20,000 entities are counted; past that,
the table's disk usage is scaled by the entities per byte of runs of
entities counted at 8 places spread over it. Estimates are
marked with "~"; the newest writes, still in memory, are counted among
the entities but not in the bytes (the output says so when there are
any). Under each table, one line per
secondary index estimates its entries and bytes the same way (the table's
line does not include them). --exact also counts each table's entities by
reading it. --store takes a directory or the connection string of a
tablestore server, which estimates the same way.`,
		example: `tablestore stats --store data
tablestore stats --store data People --exact`,
		flags: func(fs *flag.FlagSet, io *stdio) func(context.Context, []string) error {
			store := storeFlag(fs)
			exact := fs.Bool("exact", false, "also count the entities by reading every table")
			asJSON := fs.Bool("json", false, "one JSON object per table")
			return func(ctx context.Context, args []string) (err error) {
				db, err := openStore(*store, nil)
				if err != nil {
					return err
				}
				defer closeStore(db, &err)
				tables := args
				if len(tables) == 0 {
					for name, err := range db.TableNames(ctx, "") {
						if err != nil {
							return err
						}
						tables = append(tables, name)
					}
				}
				type indexSize struct {
					Name             string `json:"name"`
					EstimatedEntries int64  `json:"estimatedEntries"`
					EstimatedBytes   int64  `json:"estimatedBytes"`
				}
				type row struct {
					Table             string      `json:"table"`
					EstimatedEntities int64       `json:"estimatedEntities"`
					EstimatedBytes    int64       `json:"estimatedBytes"`
					Entities          *int64      `json:"entities,omitempty"`      // exact, with --exact
					AwaitingSweep     *int64      `json:"awaitingSweep,omitempty"` // expired, not yet removed (TTL tables)
					Indexes           []indexSize `json:"indexes,omitempty"`
				}
				var rows []row
				unflushed := false
				for _, name := range tables {
					st, err := db.Table(name).Stats(ctx)
					if err != nil {
						return err
					}
					unflushed = unflushed || st.Unflushed
					r := row{Table: name, EstimatedEntities: st.Entities, EstimatedBytes: st.Bytes}
					if r.AwaitingSweep, err = awaitingSweep(ctx, db.Table(name)); err != nil {
						return err
					}
					infos, err := db.Table(name).Indexes(ctx)
					if err != nil {
						return err
					}
					for _, in := range infos {
						r.Indexes = append(r.Indexes, indexSize{Name: in.Name, EstimatedEntries: in.Entries, EstimatedBytes: in.Bytes})
					}
					if *exact {
						n, err := countEntities(ctx, db.Table(name))
						if err != nil {
							return err
						}
						r.Entities = &n
					}
					rows = append(rows, r)
				}
				out := bufio.NewWriter(io.stdout)
				defer func() {
					if ferr := out.Flush(); err == nil {
						err = ferr
					}
				}()
				if *asJSON {
					enc := json.NewEncoder(out)
					for _, r := range rows {
						if err := enc.Encode(r); err != nil {
							return err
						}
					}
				} else {
					cells := [][]string{{"TABLE", "ENTITIES", "BYTES"}}
					if *exact {
						cells[0] = append(cells[0], "COUNTED")
					}
					for _, r := range rows {
						c := []string{r.Table, "~" + count(r.EstimatedEntities), "~" + size(r.EstimatedBytes)}
						if r.Entities != nil {
							c = append(c, count(*r.Entities))
						}
						if r.AwaitingSweep != nil {
							c = append(c, "expired, awaiting sweep: "+count(*r.AwaitingSweep))
						}
						cells = append(cells, c)
						for _, in := range r.Indexes {
							cells = append(cells, []string{"  index " + in.Name, "~" + count(in.EstimatedEntries), "~" + size(in.EstimatedBytes)})
						}
					}
					writeAligned(out, cells)
					fmt.Fprintln(out, statsFootnote)
				}
				if err := out.Flush(); err != nil {
					return err
				}
				if unflushed { // after the table, which it is about
					fmt.Fprintln(io.stderr, "stats: the newest writes are still in memory and not in the byte estimates")
				}
				return nil
			}
		},
	}
}

// statsFootnote says how stats' estimates are made.
const statsFootnote = "~ estimated: up to 20,000 counted, the rest from disk usage at the density of runs counted in 8 places"

// countEntities counts a table's entities by reading them all.
func countEntities(ctx context.Context, t *tablestore.Table) (int64, error) {
	var n int64
	q := tablestore.Query{Select: []string{"PartitionKey"}}
	for _, err := range t.Query(ctx, q) {
		if err != nil {
			return 0, err
		}
		n++
	}
	return n, nil
}

// writeAligned writes rows of cells in columns two spaces apart.
func writeAligned(w *bufio.Writer, rows [][]string) {
	var width []int
	for _, r := range rows {
		for i, c := range r {
			if i == len(width) {
				width = append(width, 0)
			}
			width[i] = max(width[i], utf8.RuneCountInString(c))
		}
	}
	for _, r := range rows {
		var b strings.Builder
		for i, c := range r {
			b.WriteString(c)
			if i < len(r)-1 {
				b.WriteString(strings.Repeat(" ", width[i]-utf8.RuneCountInString(c)+2))
			}
		}
		fmt.Fprintln(w, b.String())
	}
}
