package main

import (
	"context"
	"flag"
	"fmt"
	"time"

	"github.com/tablestore/tablestore"
)

func ttlCommand() *command {
	return &command{
		name:    "ttl",
		args:    "TABLE",
		summary: "show or set a table's time to live",
		help: `ttl shows a table's time-to-live settings, or sets them with --default,
--property or --off. An entity expires at its --property's DateTime if it
has one, otherwise at its Timestamp plus --default; expired entities are
absent at once for every read and removed later by a background sweeper.
Setting them scans the table to build its expiry index; writes to the
table wait meanwhile. --store takes a directory or the connection string
of a tablestore server (Azure has no expiry).`,
		example: `tablestore ttl --store data Sessions
tablestore ttl --store data Sessions --default 24h
tablestore ttl --store data Uploads --property ExpiresAt
tablestore ttl --store data Sessions --off`,
		flags: func(fs *flag.FlagSet, io *stdio) func(context.Context, []string) error {
			store := storeFlag(fs)
			def := fs.Duration("default", 0, "expire entities this long after their last write (0: never)")
			prop := fs.String("property", "", "an Edm.DateTime property holding an entity's own expiry")
			off := fs.Bool("off", false, "remove the settings: nothing expires")
			return func(ctx context.Context, args []string) (err error) {
				if len(args) != 1 {
					return usagef("ttl takes one TABLE")
				}
				set := map[string]bool{}
				fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
				if *off && (set["default"] || set["property"]) {
					return usagef("--off takes no --default or --property")
				}
				db, err := openStore(*store, nil)
				if err != nil {
					return err
				}
				defer closeStore(db, &err)
				t := db.Table(args[0])
				if *off || set["default"] || set["property"] {
					s := tablestore.TTL{}
					if !*off {
						if s, err = t.TTL(ctx); err != nil {
							return err
						}
						if set["default"] {
							s.Default = *def
						}
						if set["property"] {
							s.Property = *prop
						}
					}
					if err := t.SetTTL(ctx, s); err != nil {
						return err
					}
				}
				s, err := t.TTL(ctx)
				if err != nil {
					return err
				}
				fmt.Fprintln(io.stdout, formatTTL(s))
				return nil
			}
		},
	}
}

// formatTTL describes settings in one line.
func formatTTL(s tablestore.TTL) string {
	if s.Default == 0 && s.Property == "" {
		return "off: entities never expire"
	}
	out := ""
	if s.Property != "" {
		out = fmt.Sprintf("property %s", s.Property)
	}
	if s.Default > 0 {
		if out != "" {
			out += ", else "
		}
		out += fmt.Sprintf("default %s after the last write", s.Default.Round(time.Millisecond))
	}
	return out
}

// awaitingSweep returns how many of t's entities have expired and await
// the sweeper, or nil for a table without TTL settings.
func awaitingSweep(ctx context.Context, t *tablestore.Table) (*int64, error) {
	s, err := t.TTL(ctx)
	if err != nil || (s.Default == 0 && s.Property == "") {
		return nil, err
	}
	n, err := t.ExpiredCount(ctx)
	if err != nil {
		return nil, err
	}
	return &n, nil
}
