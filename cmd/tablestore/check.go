package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"strings"

	"github.com/tablestore/tablestore"
)

func checkCommand() *command {
	return &command{
		name:    "check",
		args:    "",
		summary: "read every block of a closed store and report damaged files",
		help: `check reads every block of every live data file of a local store with its
checksum, every record of its MANIFEST and write-ahead logs, and every
stored entity, and lists each damaged file with the tables it holds. It
changes nothing (it opens the store read-only, so a store on read-only
media can be checked), and it works on a store that Open refuses. The
store must not be open in another process. Exit status 1 when anything is
damaged.`,
		example: `tablestore check --store data
tablestore check --store data --json`,
		flags: func(fs *flag.FlagSet, io *stdio) func(context.Context, []string) error {
			store := storeFlag(fs)
			asJSON := fs.Bool("json", false, "print the report as one JSON object")
			return func(ctx context.Context, args []string) error {
				if len(args) > 0 {
					return usagef("check takes no arguments")
				}
				if *store == "" {
					return usagef("no store: give --store DIR or set $%s", storeEnv)
				}
				if isRemote(*store) {
					return usagef("check works on a local store directory only")
				}
				rep, err := tablestore.CheckDir(ctx, *store, withEncryption(nil))
				if err != nil {
					return err
				}
				if *asJSON {
					type damaged struct {
						Path   string   `json:"path"`
						Kind   string   `json:"kind"`
						Tables []string `json:"tables"`
						Error  string   `json:"error"`
					}
					out := struct {
						Files    int       `json:"files"`
						Entities int       `json:"entities"`
						Damaged  []damaged `json:"damaged"`
					}{Files: rep.Files, Entities: rep.Entities, Damaged: []damaged{}}
					for _, d := range rep.Damaged {
						out.Damaged = append(out.Damaged, damaged{d.Path, d.Kind, d.Tables, fmt.Sprint(d.Err)})
					}
					if err := json.NewEncoder(io.stdout).Encode(out); err != nil {
						return err
					}
				} else {
					for _, d := range rep.Damaged {
						tables := strings.Join(d.Tables, ", ")
						if tables == "" {
							tables = "unknown"
						}
						fmt.Fprintf(io.stdout, "damaged %s %s (tables: %s): %v\n", d.Kind, d.Path, tables, d.Err)
					}
					fmt.Fprintf(io.stdout, "checked %d files, %d entities: %d damaged\n", rep.Files, rep.Entities, len(rep.Damaged))
				}
				if len(rep.Damaged) > 0 {
					return fmt.Errorf("%d damaged files", len(rep.Damaged))
				}
				return nil
			}
		},
	}
}
