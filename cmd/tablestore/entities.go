package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/tablestore/tablestore"
)

func getCommand() *command {
	return &command{
		name:    "get",
		args:    "TABLE PARTITIONKEY ROWKEY",
		summary: "print one entity as JSON",
		help: `get prints one entity in Azure's JSON wire format, with its odata.etag and
Timestamp, on one line (indented on a terminal). A missing entity fails
with ResourceNotFound.`,
		example: `tablestore get --store data People Sales 0042
tablestore get --store data People Sales 0042 --select Name,Age`,
		flags: func(fs *flag.FlagSet, io *stdio) func(context.Context, []string) error {
			store := storeFlag(fs)
			var sel stringList
			fs.Var(&sel, "select", "properties to return, comma-separated or repeated (default all)")
			return func(ctx context.Context, args []string) (err error) {
				if err := wantArgs(args, 3, 3, "TABLE PARTITIONKEY ROWKEY"); err != nil {
					return err
				}
				db, err := openStore(*store, nil)
				if err != nil {
					return err
				}
				defer closeStore(db, &err)
				var opts *tablestore.GetOptions
				if sel != nil {
					opts = &tablestore.GetOptions{Select: sel}
				}
				e, err := db.Table(args[0]).Get(ctx, args[1], args[2], opts)
				if err != nil {
					return err
				}
				b, err := e.MarshalJSON()
				if err != nil {
					return err
				}
				if io.outTerminal {
					var ind bytes.Buffer
					if json.Indent(&ind, b, "", "  ") == nil {
						b = ind.Bytes()
					}
				}
				_, err = fmt.Fprintf(io.stdout, "%s\n", b)
				return err
			}
		},
	}
}

// putModes maps the --mode values of put to how the entity is written.
var putModes = map[string]string{
	"insert":       "insert a new entity; EntityAlreadyExists if it exists",
	"upsert":       "insert, or replace the stored entity",
	"upsert-merge": "insert, or merge into the stored entity",
	"replace":      "replace an existing entity (with --if-match)",
	"merge":        "merge into an existing entity (with --if-match)",
}

func putCommand() *command {
	return &command{
		name:    "put",
		args:    "TABLE [JSON | -]",
		summary: "write entities from Azure's JSON",
		help: `put writes the entity given as JSON in Azure's wire format (properties
typed by "Name@odata.type" annotations where JSON cannot tell the type, as
export writes them). With "-" or no JSON argument, it reads JSON lines from
standard input and writes each in turn (not as one transaction). It prints
each written entity's new ETag. A --store directory that holds no store
becomes a new one (put says so on standard error).

Modes (--mode):
  insert        insert a new entity; EntityAlreadyExists if it exists (default)
  upsert        insert, or replace the stored entity
  upsert-merge  insert, or merge into the stored entity
  replace       replace an existing entity, if its ETag matches --if-match
  merge         merge into an existing entity, if its ETag matches --if-match`,
		example: `tablestore put --store data People '{"PartitionKey":"Sales","RowKey":"0042","Name":"Ana","Age":41}'
tablestore put --store data People --mode merge --if-match '*' '{"PartitionKey":"Sales","RowKey":"0042","Age":42}'`,
		flags: func(fs *flag.FlagSet, io *stdio) func(context.Context, []string) error {
			store := storeFlag(fs)
			mode := fs.String("mode", "insert", "insert, upsert, upsert-merge, replace or merge")
			ifMatch := fs.String("if-match", "*", "replace and merge: the ETag the stored entity must have (* matches any)")
			return func(ctx context.Context, args []string) (err error) {
				if err := wantArgs(args, 1, 2, "TABLE and a JSON entity (or - for standard input)"); err != nil {
					return err
				}
				if _, ok := putModes[*mode]; !ok {
					return usagef("unknown --mode %q: want insert, upsert, upsert-merge, replace or merge", *mode)
				}
				db, err := openOrCreateStore(*store, nil, io.stderr, "put")
				if err != nil {
					return err
				}
				defer closeStore(db, &err)
				t := db.Table(args[0])
				put := func(line int, data []byte) error {
					var e tablestore.Entity
					err := e.UnmarshalJSON(data)
					if err == nil {
						err = putEntity(ctx, t, &e, *mode, tablestore.ETag(*ifMatch))
					}
					if err != nil {
						if line > 0 {
							return fmt.Errorf("line %d: %w", line, err)
						}
						return err
					}
					_, err = fmt.Fprintln(io.stdout, e.ETag)
					return err
				}
				if len(args) == 2 && args[1] != "-" {
					return put(0, []byte(args[1]))
				}
				return eachLine(io.stdin, func(line int, data []byte) error {
					if len(bytes.TrimSpace(data)) == 0 {
						return nil
					}
					return put(line, data)
				})
			}
		},
	}
}

// putEntity writes e to t in one of putModes.
func putEntity(ctx context.Context, t *tablestore.Table, e *tablestore.Entity, mode string, ifMatch tablestore.ETag) error {
	switch mode {
	case "insert":
		return t.Insert(ctx, e)
	case "upsert":
		return t.Upsert(ctx, e, tablestore.Replace)
	case "upsert-merge":
		return t.Upsert(ctx, e, tablestore.Merge)
	case "replace":
		return t.Update(ctx, e, tablestore.Replace, ifMatch)
	default:
		return t.Update(ctx, e, tablestore.Merge, ifMatch)
	}
}

// eachLine calls fn with every line of r (without its line ending) and
// its 1-based number, until fn fails.
func eachLine(r io.Reader, fn func(line int, data []byte) error) error {
	br := bufio.NewReaderSize(r, 1<<16)
	for n := 1; ; n++ {
		data, err := br.ReadBytes('\n')
		if len(data) > 0 {
			if ferr := fn(n, bytes.TrimRight(data, "\r\n")); ferr != nil {
				return ferr
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

func deleteCommand() *command {
	return &command{
		name:    "delete",
		args:    "TABLE PARTITIONKEY ROWKEY",
		summary: "delete one entity",
		help: `delete removes one entity, if its ETag matches --if-match (default *, any
ETag). A missing entity fails with ResourceNotFound. To delete a whole
table, use tables delete.`,
		example: `tablestore delete --store data People Sales 0042
tablestore delete --store data People Sales 0042 --if-match 'W/"datetime'\''2026-11-22T10%3A00%3A00.1234567Z'\''"'`,
		flags: func(fs *flag.FlagSet, io *stdio) func(context.Context, []string) error {
			store := storeFlag(fs)
			ifMatch := fs.String("if-match", "*", "the ETag the stored entity must have (* matches any)")
			return func(ctx context.Context, args []string) (err error) {
				if err := wantArgs(args, 3, 3, "TABLE PARTITIONKEY ROWKEY"); err != nil {
					return err
				}
				if strings.TrimSpace(*ifMatch) == "" {
					return usagef("--if-match must not be empty")
				}
				db, err := openStore(*store, nil)
				if err != nil {
					return err
				}
				defer closeStore(db, &err)
				return db.Table(args[0]).Delete(ctx, args[1], args[2], tablestore.ETag(*ifMatch))
			}
		},
	}
}
