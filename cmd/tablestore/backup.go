package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	io2 "io"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/tablestore/tablestore"
)

func backupCommand() *command {
	return &command{
		name:    "backup",
		args:    "DEST",
		summary: "write a consistent copy of a local store",
		help: `backup writes a copy of the whole store into the new directory DEST (a
Pebble checkpoint: the immutable data files are hard-linked when DEST is on
the same filesystem, copied otherwise, and the write-ahead log is synced
and copied). The copy holds every commit made before backup started, each
transaction entirely or not at all, as of one instant, and opens as a store
of its own; backup then opens it to check it. Writers may keep writing
while it runs.

A store is opened by one process at a time: to back up a store another
process has open, have that process call DB.Checkpoint (the API this
command uses), or stop it first. For the store a running tablestore serve
has open, give --server with its admin listener's URL (serve
--admin-addr, with --backup-dir): DEST is then the backup's name, a
directory under the server's --backup-dir, written by the server.`,
		example: `tablestore backup --store data backups/data-2026-11-23
tablestore backup --server http://127.0.0.1:9090 nightly-2026-11-23`,
		flags: func(fs *flag.FlagSet, io *stdio) func(context.Context, []string) error {
			store := storeFlag(fs)
			srv := fs.String("server", "", "a running tablestore serve's admin URL: the server writes the backup DEST under its --backup-dir")
			return func(ctx context.Context, args []string) (err error) {
				if err := wantArgs(args, 1, 1, "DEST"); err != nil {
					return err
				}
				if *srv != "" {
					return remoteBackup(ctx, io, *srv, args[0])
				}
				if _, err := os.Stat(args[0]); err == nil {
					return usagef("%s exists; backup writes a new directory", args[0])
				}
				db, err := openLocalStore(*store, nil)
				if err != nil {
					return err
				}
				defer closeStore(db, &err)
				prog := startProgress(io, "backup", 0, 0)
				n, bytes, err := backup(ctx, db, args[0])
				if err != nil {
					prog.finish("backup: failed after " + prog.elapsed().Round(time.Millisecond).String())
					return err
				}
				prog.finish(fmt.Sprintf("backup: %d table(s), %s of files in %s, in %s", n, size(bytes), args[0],
					prog.elapsed().Round(time.Millisecond)))
				return nil
			}
		},
	}
}

// remoteBackup asks a server's admin listener for a backup named name
// and prints where it went.
func remoteBackup(ctx context.Context, io *stdio, adminURL, name string) error {
	u, err := url.Parse(strings.TrimSuffix(adminURL, "/") + "/backup")
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return usagef("--server wants the admin listener's http URL, such as http://127.0.0.1:9090")
	}
	u.RawQuery = url.Values{"name": {name}}.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.String(), nil)
	if err != nil {
		return err
	}
	start := time.Now()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	var res struct {
		Dir      string            `json:"dir"`
		Accounts map[string]string `json:"accounts"`
		Error    string            `json:"error"`
	}
	body, err := io2.ReadAll(io2.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return err
	}
	if err := json.Unmarshal(body, &res); err != nil {
		return fmt.Errorf("the server answered %s: %s", resp.Status, strings.TrimSpace(string(body)))
	}
	if resp.StatusCode != http.StatusCreated {
		return fmt.Errorf("the server refused the backup (%s): %s", resp.Status, res.Error)
	}
	fmt.Fprintf(io.stderr, "backup: %s written by the server in %s\n", res.Dir, time.Since(start).Round(time.Millisecond))
	fmt.Fprintln(io.stdout, res.Dir)
	return nil
}

// backup checkpoints db into dest, then opens the copy and lists its
// tables to check it. It returns the copy's table count and file bytes.
func backup(ctx context.Context, db *tablestore.DB, dest string) (tables int, bytes int64, err error) {
	if err := db.Checkpoint(ctx, dest); err != nil {
		return 0, 0, err
	}
	cp, err := tablestore.Open(dest, withEncryption(nil))
	if err != nil {
		return 0, 0, fmt.Errorf("the backup in %s does not open: %w", dest, err)
	}
	for _, err := range cp.TableNames(ctx, "") {
		if err != nil {
			cp.Close()
			return 0, 0, fmt.Errorf("the backup in %s: %w", dest, err)
		}
		tables++
	}
	if err := cp.Close(); err != nil {
		return 0, 0, err
	}
	err = filepath.WalkDir(dest, func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if info, err := d.Info(); err == nil && info.Mode().IsRegular() {
			bytes += info.Size()
		}
		return nil
	})
	if errors.Is(err, fs.ErrNotExist) {
		err = nil
	}
	return tables, bytes, err
}
