package main

import (
	"context"
	"flag"
	"fmt"

	"github.com/tablestore/tablestore"
	"github.com/tablestore/tablestore/edm"
)

func tablesCommand() *command {
	return &command{
		name:    "tables",
		args:    "[list [PREFIX]] | create NAME... | delete NAME...",
		summary: "list, create or delete tables",
		help: `tables list (or tables alone) prints the table names, one per line (only
those starting with PREFIX, case-insensitively, when given). tables create and tables delete
create or delete each named table; deleting a table removes all its
entities at once. tables create makes a new store when the --store
directory holds none (and says so on standard error); the others need an
existing store.`,
		example: `tablestore tables create --store data People
tablestore tables list --store data
tablestore tables delete --store data People`,
		flags: func(fs *flag.FlagSet, io *stdio) func(context.Context, []string) error {
			store := storeFlag(fs)
			ifMissing := fs.Bool("if-not-exists", false, "create: no error when the table exists; delete: no error when it does not")
			return func(ctx context.Context, args []string) (err error) {
				if len(args) == 0 {
					args = []string{"list"} // a bare `tables` lists
				}
				verb, names := args[0], args[1:]
				switch verb {
				case "list", "ls":
					if err := wantArgs(names, 0, 1, "at most one PREFIX"); err != nil {
						return err
					}
				case "create", "delete", "rm":
					if len(names) == 0 {
						return usagef("want a table name after %s", verb)
					}
				default:
					return usagef("unknown tables action %q: want list, create or delete", verb)
				}
				open := openStore
				if verb == "create" {
					open = func(store string, opts *tablestore.Options) (*tablestore.DB, error) {
						return openOrCreateStore(store, opts, io.stderr, "tables create")
					}
				}
				db, err := open(*store, nil)
				if err != nil {
					return err
				}
				defer closeStore(db, &err)
				switch verb {
				case "list", "ls":
					prefix := ""
					if len(names) == 1 {
						prefix = names[0]
					}
					for name, err := range db.TableNames(ctx, prefix) {
						if err != nil {
							return err
						}
						fmt.Fprintln(io.stdout, name)
					}
				case "create":
					for _, name := range names {
						if _, err := db.CreateTable(ctx, name); err != nil {
							if *ifMissing && tablestore.ErrorCode(err) == edm.CodeTableAlreadyExists {
								continue
							}
							return err
						}
					}
				default:
					for _, name := range names {
						if err := db.DeleteTable(ctx, name); err != nil {
							if *ifMissing && tablestore.ErrorCode(err) == edm.CodeResourceNotFound {
								continue
							}
							return err
						}
					}
				}
				return nil
			}
		},
	}
}

// ensureTable creates the table if it does not exist.
func ensureTable(ctx context.Context, db *tablestore.DB, name string) (*tablestore.Table, error) {
	t, err := db.CreateTable(ctx, name)
	if tablestore.ErrorCode(err) == edm.CodeTableAlreadyExists {
		return db.Table(name), nil
	}
	return t, err
}
