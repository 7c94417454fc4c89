package main

import (
	"bufio"
	"context"
	"flag"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/tablestore/tablestore"
	"github.com/tablestore/tablestore/entitycsv"
)

// scanCacheSize is the block cache of stores opened only to be read
// through once (export, the source of copy).
const scanCacheSize = 8 << 20

func exportCommand() *command {
	return &command{
		name:    "export",
		args:    "TABLE [FILE]",
		summary: "write a table as JSON lines or CSV",
		help: `export writes the entities of TABLE (those matching --filter, when given) to
FILE, or to standard output without FILE or with "-", in (PartitionKey,
RowKey) order. It reads page by page, so memory stays small whatever the
table's size; each page is a consistent view, but writes made while export
runs may or may not show.

JSON lines (the default; CSV for a .csv file or --format csv): one entity
per line in Azure's JSON wire format, properties in name order with
"Name@odata.type" annotations where JSON cannot tell the type, as import
reads it. The engine's Timestamp and ETag are left out unless --system, so
two stores holding the same entities export identical bytes.

CSV: a typed header, then one row per entity (see "tablestore import
--help" for the format). The columns come from a first pass over the
table, unless --columns lists them; a property of an entity with no column
for its name and type fails the export. The CSV reads back exactly,
formulas included: a cell starting with =, +, -, @, a tab or a carriage
return is written as it is, and a spreadsheet opening the file may run it.
--csv-spreadsheet-safe writes such cells after a single quote (') so a
spreadsheet shows them as text (numbers stay as they are); the file is then
for reading, not for import, which would keep the quotes.`,
		example: `tablestore export --store data People people.jsonl
tablestore export --store data People people.csv --filter "PartitionKey eq 'Sales'"
tablestore export --store data People --format csv --columns PartitionKey,RowKey,Name,Age:Edm.Int32
tablestore export --store data People people.csv --csv-spreadsheet-safe`,
		flags: func(fs *flag.FlagSet, io *stdio) func(context.Context, []string) error {
			store := storeFlag(fs)
			format := fs.String("format", "", "json or csv (default: csv for a .csv file, else json)")
			filter := fs.String("filter", "", "export only the entities matching this OData $filter")
			system := fs.Bool("system", false, "JSON: include each entity's odata.etag and Timestamp")
			spreadsheet := fs.Bool("csv-spreadsheet-safe", false, "CSV: write cells a spreadsheet would run as formulas (starting with = + - @, tab or CR) after a quote (')")
			var columns stringList
			fs.Var(&columns, "columns", "CSV: the header columns, NAME or NAME:TYPE, comma-separated (default: found by a first pass)")
			return func(ctx context.Context, args []string) (err error) {
				if err := wantArgs(args, 1, 2, "TABLE [FILE]"); err != nil {
					return err
				}
				path := "-"
				if len(args) == 2 {
					path = args[1]
				}
				f := *format
				if f == "" {
					f = "json"
					if strings.EqualFold(filepath.Ext(path), ".csv") {
						f = "csv"
					}
				}
				if f != "json" && f != "csv" {
					return usagef("unknown --format %q: want json or csv", f)
				}
				if f == "csv" && *system {
					return usagef("--system is for JSON only")
				}
				if f != "csv" && *spreadsheet {
					return usagef("--csv-spreadsheet-safe is for CSV only")
				}
				var cols entitycsv.Header
				if columns != nil {
					if f != "csv" {
						return usagef("--columns is for CSV only")
					}
					if cols, err = entitycsv.ParseHeader(columns); err != nil {
						return usagef("--columns: %s", csvErrorText(err))
					}
				}
				// A scan reads each block once: a small cache keeps memory flat.
				db, err := openStore(*store, &tablestore.Options{CacheSize: scanCacheSize})
				if err != nil {
					return err
				}
				defer closeStore(db, &err)
				t := db.Table(args[0])
				q := tablestore.Query{Filter: *filter}
				// Fail on a missing table or a bad filter before creating FILE.
				if _, err := t.QueryPage(ctx, tablestore.Query{Filter: *filter, Top: 1}); err != nil {
					return err
				}
				if f == "csv" && cols == nil {
					if cols, err = discoverColumns(ctx, t, q); err != nil {
						return err
					}
				}
				out := io.stdout
				if path != "-" {
					file, err := os.Create(path)
					if err != nil {
						return err
					}
					defer func() {
						if cerr := file.Close(); err == nil {
							err = cerr
						}
					}()
					out = file
				}
				var csvOpts []entitycsv.Option
				if *spreadsheet {
					csvOpts = append(csvOpts, entitycsv.SpreadsheetSafe())
				}
				return exportTable(ctx, io, t, q, out, f, cols, *system, csvOpts...)
			}
		},
	}
}

// exportTable streams the entities of t matching q to out; csvOpts change
// the CSV's encoder.
func exportTable(ctx context.Context, io *stdio, t *tablestore.Table, q tablestore.Query, out io.Writer,
	format string, cols entitycsv.Header, system bool, csvOpts ...entitycsv.Option) error {
	var enc *entitycsv.Encoder
	if format == "csv" {
		var err error
		if enc, err = entitycsv.NewEncoder(cols, csvOpts...); err != nil {
			return err
		}
	}
	w := bufio.NewWriterSize(out, 256<<10)
	prog := startProgress(io, "export", 0, 0)
	var line []byte
	var err error
	if enc != nil {
		line = enc.AppendHeader(line[:0])
		_, err = w.Write(line)
	}
	for e, qerr := range t.Query(ctx, q) {
		if err != nil {
			break
		}
		if qerr != nil {
			err = qerr
			break
		}
		if format == "csv" {
			line, err = enc.AppendEntity(line[:0], e)
		} else {
			line, err = exportJSON(line[:0], e, system)
		}
		if err == nil {
			_, err = w.Write(line)
		}
		prog.add(1, int64(len(line)))
	}
	if ferr := w.Flush(); err == nil {
		err = ferr
	}
	prog.finish("export: " + prog.summary())
	return err
}

// exportJSON appends e's JSON line; without system, without the Timestamp
// and ETag the engine set.
func exportJSON(b []byte, e *tablestore.Entity, system bool) ([]byte, error) {
	if !system {
		e.Timestamp, e.ETag = time.Time{}, ""
	}
	j, err := e.MarshalJSON()
	if err != nil {
		return b, err
	}
	b = append(b, j...)
	return append(b, '\n'), nil
}

// discoverColumns reads the entities of q once and returns the CSV
// columns that hold them all: PartitionKey, RowKey, then every property
// name and type seen, sorted.
func discoverColumns(ctx context.Context, t *tablestore.Table, q tablestore.Query) (entitycsv.Header, error) {
	seen := map[entitycsv.Column]bool{}
	for e, err := range t.Query(ctx, q) {
		if err != nil {
			return nil, err
		}
		for name, v := range e.Properties {
			if c, ok := entitycsv.ColumnOf(name, v); ok {
				seen[c] = true
			}
		}
	}
	return entitycsv.Columns(slices.Collect(maps.Keys(seen))), nil
}
