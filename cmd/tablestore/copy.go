package main

import (
	"context"
	"flag"
	"fmt"
	"time"

	"github.com/tablestore/tablestore"
)

func copyCommand() *command {
	return &command{
		name:    "copy",
		args:    "SOURCE DEST [TABLE...]",
		summary: "copy tables between two stores",
		help: `copy copies the named tables, or every table, from store SOURCE to store
DEST (each a directory or a connection string), creating the tables in DEST
as needed (a DEST directory that holds no store becomes a new one, and copy
says so on standard error). Entities keep their properties; DEST sets its
own Timestamps and ETags. Each table is read page by page in (PartitionKey, RowKey) order and
written in batches of up to 1,000 entities, each entity's write atomic
(not each batch: an interrupted copy leaves part of it written). --mode insert (the default) fails on an entity DEST already has;
upsert replaces it. Entities DEST has and SOURCE lacks are left alone.

Each page is read from a consistent view of SOURCE; for a copy consistent
across a live store, copy from a backup.`,
		example: `tablestore copy data data-copy
tablestore copy data data-copy People Orders --mode upsert`,
		flags: func(fs *flag.FlagSet, io *stdio) func(context.Context, []string) error {
			mode := fs.String("mode", "insert", "insert or upsert")
			filter := fs.String("filter", "", "copy only the entities matching this OData $filter")
			noSync := fs.Bool("no-sync", false, "do not sync each commit in DEST (faster; a crash may lose the newest commits)")
			return func(ctx context.Context, args []string) (err error) {
				if err := wantArgs(args, 2, -1, "SOURCE DEST [TABLE...]"); err != nil {
					return err
				}
				action, ok := importModes[*mode]
				if !ok || *mode == "upsert-merge" {
					return usagef("unknown --mode %q: want insert or upsert", *mode)
				}
				if args[0] == args[1] {
					return usagef("SOURCE and DEST are the same store")
				}
				src, err := openStore(args[0], &tablestore.Options{CacheSize: scanCacheSize})
				if err != nil {
					return err
				}
				defer closeStore(src, &err)
				dst, err := openOrCreateStore(args[1], &tablestore.Options{NoSync: *noSync}, io.stderr, "copy")
				if err != nil {
					return err
				}
				defer closeStore(dst, &err)
				tables := args[2:]
				if len(tables) == 0 {
					for name, err := range src.TableNames(ctx, "") {
						if err != nil {
							return err
						}
						tables = append(tables, name)
					}
				}
				prog := startProgress(io, "copy", 0, 0)
				for _, name := range tables {
					if err = copyTable(ctx, src.Table(name), dst, name, action, *filter, prog); err != nil {
						err = fmt.Errorf("table %s: %w", name, err)
						break
					}
				}
				prog.finish(fmt.Sprintf("copy: %d table(s), %s", len(tables), prog.summary()))
				return err
			}
		},
	}
}

// copyTable copies the entities of from matching filter into the table
// name of dst, created if missing.
func copyTable(ctx context.Context, from *tablestore.Table, dst *tablestore.DB, name string,
	action tablestore.ActionType, filter string, prog *progress) error {
	// Fail on a missing source table before creating anything.
	if _, err := from.QueryPage(ctx, tablestore.Query{Filter: filter, Top: 1}); err != nil {
		return err
	}
	to, err := ensureTable(ctx, dst, name)
	if err != nil {
		return err
	}
	c, err := newBulkLoader(context.WithoutCancel(ctx), to, tablestore.BulkOptions{Action: action},
		func(*record, error) error {
			prog.add(1, 0)
			return nil
		}, func() error { return nil })
	if err != nil {
		return err
	}
	for e, err := range from.Query(ctx, tablestore.Query{Filter: filter}) {
		if err != nil {
			return err
		}
		e.Timestamp, e.ETag = time.Time{}, ""
		if err := c.add(&record{entity: e}); err != nil {
			return err
		}
	}
	return c.flush()
}
