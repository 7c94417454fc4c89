package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"

	"github.com/tablestore/tablestore"
	"github.com/tablestore/tablestore/driver"
	"github.com/tablestore/tablestore/server"
)

func changesCommand() *command {
	return &command{
		name:    "changes",
		args:    "TABLE",
		summary: "read a table's change feed as JSON lines; turn the feed on or off",
		help: `changes writes the table's change feed to standard output, one change per
line as a JSON object, in commit order: its cursor, sequence number,
operation (insert, updateMerge, updateReplace, upsertMerge, upsertReplace,
delete, deleteRange, dropTable, expire), keys (toRowKey ends a
deleteRange's range), Timestamp, ETag, the commit it belongs to (commit,
index, count, kind: commit, bulk, rangeDelete, dropTable, sweep) and,
when the feed keeps images, the new entity in Azure's JSON.

An expire line is the removal of an entity that expired (a table with
TTL settings): its timestamp is the removing commit's (the background
sweeper's, kind sweep, or that of a write over the expired entity, just
before the write's line), its etag the removed entity's, and expiry the
instant the entity expired at.

--from starts after a cursor: a change's "cursor", "beginning" (the
default: the oldest change kept), "now", or an RFC 3339 time (the first
change at or after it). To resume a pipeline, pass the cursor of the last
line it handled: no change is repeated or missed. --follow keeps waiting
for new commits until interrupted or the table is deleted; each line is
written as soon as its change is read.

The feed is off by default: --enable turns it on (with --images and
--retention), --disable turns it off and deletes its records, --status
prints its settings as JSON; each then exits.

--store takes a directory or a connection string. A store that tablestore
serve has open is read through the server, with the connection string
serve printed: the server holds the store's lock, and other processes keep
writing through it while this one follows. Over a connection, --follow
long-polls the server, so a change is written within milliseconds of its
commit. Any other service answers NotImplemented: Azure has no change
feed.`,
		example: `tablestore changes --store data --enable --images new People
tablestore changes --store data People
tablestore changes --store data --from 3.1207 --follow People | consumer
tablestore changes --store "UseDevelopmentStorage=true" --follow People`,
		flags: func(fs *flag.FlagSet, io *stdio) func(context.Context, []string) error {
			store := storeFlag(fs)
			from := fs.String("from", "beginning", "start after this cursor: a change's cursor, beginning, now, or an RFC 3339 time")
			follow := fs.Bool("follow", false, "wait for new commits until interrupted")
			pk := fs.String("partition", "", "only the changes of this PartitionKey")
			enable := fs.Bool("enable", false, "turn the table's feed on (or change its settings) and exit")
			disable := fs.Bool("disable", false, "turn the table's feed off, deleting its records, and exit")
			status := fs.Bool("status", false, "print the feed's settings as JSON and exit")
			images := fs.String("images", tablestore.ImagesKeysOnly.String(), "with --enable: keysOnly, or new (the new entity of each write)")
			retention := fs.Duration("retention", tablestore.DefaultChangeRetention, "with --enable: how long changes are kept")
			return func(ctx context.Context, args []string) (err error) {
				if len(args) != 1 {
					return usagef("changes takes one TABLE")
				}
				cur, err := tablestore.ParseCursor(*from)
				if err != nil {
					return usagef("--from: %v", err)
				}
				mode, ok := driver.ParseImageMode(*images)
				if !ok {
					return usagef("--images is keysOnly or new, not %q", *images)
				}
				db, err := openStore(*store, nil)
				if err != nil {
					return err
				}
				defer closeStore(db, &err)
				tb := db.Table(args[0])
				switch {
				case *enable:
					return tb.EnableChangeFeed(ctx, tablestore.ChangeFeedOptions{Retention: *retention, Images: mode})
				case *disable:
					return tb.DisableChangeFeed(ctx)
				case *status:
					st, err := tb.ChangeFeed(ctx)
					if err != nil {
						return err
					}
					out := map[string]any{"table": args[0], "enabled": st.Enabled}
					if st.Enabled {
						out["retention"] = st.Options.Retention.String()
						out["images"] = st.Options.Images.String()
						out["oldest"] = st.Oldest.String()
						out["latest"] = st.Latest.String()
					}
					return json.NewEncoder(io.stdout).Encode(out)
				}
				return writeChanges(ctx, io, tb, tablestore.ChangesQuery{From: cur, PartitionKey: *pk, Follow: *follow})
			}
		},
	}
}

// writeChanges writes q's changes as JSON lines; when following, each
// line is flushed as it is written. An interruption (ctx ending) while
// following is a normal end.
func writeChanges(ctx context.Context, io *stdio, tb *tablestore.Table, q tablestore.ChangesQuery) (err error) {
	out := bufio.NewWriter(io.stdout)
	defer func() {
		if ferr := out.Flush(); err == nil {
			err = ferr
		}
	}()
	enc := json.NewEncoder(out)
	for c, err := range tb.Changes(ctx, q) {
		if err != nil {
			if q.Follow && ctx.Err() != nil {
				return nil
			}
			return err
		}
		l, err := server.NewChangeJSON(c)
		if err != nil {
			return fmt.Errorf("change %d: %w", c.Seq, err)
		}
		if err := enc.Encode(&l); err != nil {
			return err
		}
		if q.Follow {
			if err := out.Flush(); err != nil {
				return err
			}
		}
	}
	return nil
}
