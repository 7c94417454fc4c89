package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/tablestore/tablestore"
)

func backupsCommand() *command {
	return &command{
		name:    "backups",
		args:    "list DIR",
		summary: "show the window a continuous backup can restore",
		help: `backups list DIR describes the continuous backup in DIR (made by serve
--continuous-backup, or Options.ContinuousBackup): the restorable window,
from its oldest base to its last commit, its bases and its log. When a
power loss cost a backup with background sync the records of commits
the store kept, the hole is listed with the ranges around it that
restore accepts. A log
that ends in a partial record (a crash during an append) or a damaged
one is reported with the file and byte offset; the window ends before
it. A backup of an encrypted store is read with its key
(--encryption-key-file or $TABLESTORE_ENCRYPTION_KEY). See
docs/backup.md.`,
		example: `tablestore backups list /var/backups/data`,
		flags: func(fs *flag.FlagSet, io *stdio) func(context.Context, []string) error {
			return func(ctx context.Context, args []string) error {
				if err := wantArgs(args, 2, 2, "list DIR"); err != nil {
					return err
				}
				if args[0] != "list" {
					return usagef("unknown backups command %q; want list", args[0])
				}
				w, err := tablestore.ListBackups(args[1], withEncryption(nil))
				if err != nil {
					return err
				}
				out := io.stdout
				fmt.Fprintf(out, "window: %s to %s\n", w.Oldest.Format(time.RFC3339Nano), w.Newest.Format(time.RFC3339Nano))
				if len(w.Holes) > 0 {
					fmt.Fprintf(out, "restorable: %d range(s)\n", len(w.Ranges))
					for _, r := range w.Ranges {
						fmt.Fprintf(out, "  %s to %s\n", r.From.Format(time.RFC3339Nano), r.To.Format(time.RFC3339Nano))
					}
					for _, h := range w.Holes {
						fmt.Fprintf(out, "hole: after %s, before %s: records %d to %d lost\n", h.After.Format(time.RFC3339Nano), h.Before.Format(time.RFC3339Nano), h.FirstSeq, h.LastSeq)
					}
				}
				fmt.Fprintf(out, "bases: %d\n", len(w.Bases))
				for _, b := range w.Bases {
					fmt.Fprintf(out, "  %s\n", b.Format(time.RFC3339Nano))
				}
				fmt.Fprintf(out, "log: %d segment(s), %s, records %d to %d\n", w.Segments, size(w.Bytes), w.FirstSeq+1, w.LastSeq)
				if w.Torn != "" {
					fmt.Fprintf(out, "torn tail: %s\n", w.Torn)
				}
				if w.Damaged != nil {
					fmt.Fprintf(out, "damaged: %s\n", w.Damaged)
				}
				return nil
			}
		},
	}
}

func restoreCommand() *command {
	return &command{
		name:    "restore",
		args:    "",
		summary: "recreate a store as it was at an instant, from a continuous backup",
		help: `restore writes into the new directory --into the store as it was at
--to, from the continuous backup in --from: every commit at or before
that instant, each transaction entirely or not at all, none after; tables
created later are absent, tables dropped later present. --to is an
RFC 3339 time with fractions (2026-11-28T21:04:05.123456789Z) or "now",
the newest instant the backup holds. The result is checked (as check
does) before restore reports success. --into must be missing or empty.

--table NAME keeps only that table, renamed to --as when given: restore
the table a bad deploy rewrote beside the live one, then compare or copy
back. Its entities are copied as they were stored, each with its
Timestamp and ETag; its settings (TTL, change feed, indexes, access
policies) are not. The whole store is restored first in a directory
beside --into, removed afterwards.

A time outside the backup's window is refused with the window in the
message; a damaged log is reported with its file and byte offset and
never restored past. A backup of an encrypted store restores only with
its key (--encryption-key-file or $TABLESTORE_ENCRYPTION_KEY, with
--old-encryption-key-file for files from before a rotation); the
restored store is encrypted and opens with the same key. See tablestore
backups list and docs/backup.md.`,
		example: `tablestore restore --from /var/backups/data --to 2026-11-28T21:04:05.5Z --into data-restored
tablestore restore --from /var/backups/data --to now --into data-latest
tablestore restore --from /var/backups/data --to 2026-11-28T21:00:00Z --table Orders --as OrdersBefore --into orders-restored`,
		flags: func(fs *flag.FlagSet, io *stdio) func(context.Context, []string) error {
			from := fs.String("from", "", "the continuous backup directory")
			to := fs.String("to", "", `the instant to restore: RFC 3339 with fractions, or "now"`)
			into := fs.String("into", "", "the new store directory (missing or empty)")
			table := fs.String("table", "", "restore only this table")
			as := fs.String("as", "", "with --table: the table's name in the restored store")
			return func(ctx context.Context, args []string) (err error) {
				if err := wantArgs(args, 0, 0, "no arguments"); err != nil {
					return err
				}
				if *from == "" || *to == "" || *into == "" {
					return usagef("restore needs --from, --to and --into")
				}
				if *as != "" && *table == "" {
					return usagef("--as needs --table")
				}
				var at time.Time
				if *to != "now" {
					if at, err = time.Parse(time.RFC3339Nano, *to); err != nil {
						return usagef("--to %q is not an RFC 3339 time (such as 2026-11-28T21:04:05.5Z) nor \"now\"", *to)
					}
				}
				if ents, err := os.ReadDir(*into); err == nil && len(ents) > 0 {
					return fmt.Errorf("--into %s is not empty; restore writes a new store", *into)
				}
				prog := startProgress(io, "restore", 0, 0)
				var res *tablestore.RestoreResult
				if *table != "" {
					res, err = tablestore.RestoreTable(ctx, *from, at, *table, *as, *into, withEncryption(nil))
				} else {
					res, err = tablestore.Restore(ctx, *from, at, *into, withEncryption(nil))
				}
				if err != nil {
					prog.finish("restore: failed after " + prog.elapsed().Round(time.Millisecond).String())
					return err
				}
				prog.finish(fmt.Sprintf("restore: %s as of %s (base %s, %d commits replayed, %d entities checked) in %s",
					*into, res.Time.Format(time.RFC3339Nano), res.Base.Format(time.RFC3339Nano), res.Records, res.Entities,
					prog.elapsed().Round(time.Millisecond)))
				return nil
			}
		},
	}
}
