package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/tablestore/tablestore"
	"github.com/tablestore/tablestore/replicate"
)

func replicateCommand() *command {
	return &command{
		name:    "replicate",
		args:    "--to CONNECTION-STRING [TABLE...]",
		summary: "mirror tables of a store into another store, live, through change feeds",
		help: `replicate is a one-way live mirror of tables of a store (every table
without names) into any store --to names: a connection string of Azure
Table Storage, Cosmos DB for Table, Azurite or a tablestore server, or a
local directory. For each table it turns the change feed on (new images)
if it is off, empties the target table (creating it if needed) and copies
the table, then applies the feed from the position the copy started at,
following new commits until interrupted (--once: until it has caught up).

Each change is applied as an idempotent write: the new entity replaces, a
delete ignores absence, and so does an expiry (the source's removal of an
entity that expired under its TTL settings, which are not copied: the
entity leaves the target when its removal reaches the feed), a range
deletion queries the range at the target and deletes what it finds (not
atomic there); the upserts of one source commit to one partition go in
entity group transactions. The position
reached is saved in --state (default: STORE.replicate.json beside the
store) after the changes it covers are applied, so a replicator killed
and started again resumes there, repeating a few changes to no effect and
losing none. Delete the state file to start over with a copy.

Errors the target may not repeat (busy, timeouts) are retried; any other
stops the command with the change it could not apply. The progress line
shows per table the changes applied and the lag: at most how many changes
are still to apply, and how long ago the oldest of them was committed.

Without a terminal, the end of a table's copy (with its rate) and its
catching up ("caught up: N applied, lag 0", once each time its feed goes
quiet, with the position saved) are told on lines of their own.

--store is a local directory or the connection string of a tablestore
server, whose change feeds the command then reads through the server
(--state is then required). A local store is opened by the command, so it
must be idle (a changed table is caught up at the next run), or the
writers must be in this process: tablestore serve --replicate-to mirrors a
store its clients write to, and a service replicates with the library's
replicate package; a server's store is read while its clients write.`,
		example: `tablestore replicate --store data --to "$AZURE_CONN" Orders Users
tablestore replicate --store data --to "UseDevelopmentStorage=true" --once
tablestore replicate --store "$SERVER_CONN" --state mirror.json --to backup-dir`,
		flags: func(fs *flag.FlagSet, io *stdio) func(context.Context, []string) error {
			store := storeFlag(fs)
			to := fs.String("to", "", "the target store: a connection string or a directory")
			state := fs.String("state", "", "the file that keeps the positions (default STORE.replicate.json)")
			once := fs.Bool("once", false, "stop once every table has caught up instead of following")
			return func(ctx context.Context, args []string) (err error) {
				if *to == "" {
					return usagef("replicate needs --to")
				}
				if isRemote(*store) && *state == "" {
					return usagef("replicate from a connection string needs --state FILE, where the positions are kept")
				}
				src, err := openStore(*store, nil)
				if err != nil {
					return err
				}
				defer closeStore(src, &err)
				dst, err := openOrCreateStore(*to, nil, io.stderr, "replicate")
				if err != nil {
					return err
				}
				defer closeStore(dst, &err)
				path := *state
				if path == "" {
					path = filepath.Clean(*store) + ".replicate.json"
				}
				pos, err := loadStateFile(path)
				if err != nil {
					return err
				}
				var tables []string
				if len(args) > 0 {
					tables = args
				}
				rp := newReplicateProgress(io)
				err = replicate.Run(ctx, src, dst, replicate.Options{
					Tables: tables, Positions: pos, Follow: !*once, OnProgress: rp.update,
				})
				rp.finish()
				return err
			}
		},
	}
}

// stateFile keeps replicate's positions in a JSON file, rewritten
// atomically (a temporary file, synced, renamed over it, and the
// directory synced) on every save.
type stateFile struct {
	path string
	mu   sync.Mutex
	pos  map[string]string // table -> cursor
}

func loadStateFile(path string) (*stateFile, error) {
	s := &stateFile{path: path, pos: map[string]string{}}
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return s, nil
	}
	if err != nil {
		return nil, err
	}
	var f struct {
		Tables map[string]string `json:"tables"`
	}
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("replicate state %s: %v", path, err)
	}
	if f.Tables != nil {
		s.pos = f.Tables
	}
	return s, nil
}

func (s *stateFile) Load(table string) (tablestore.Cursor, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.pos[table]
	if !ok {
		return tablestore.Cursor{}, false, nil
	}
	c, err := tablestore.ParseCursor(t)
	if err != nil {
		return tablestore.Cursor{}, false, fmt.Errorf("replicate state %s: table %s: %w", s.path, table, err)
	}
	return c, true, nil
}

func (s *stateFile) Save(table string, c tablestore.Cursor) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pos[table] = c.String()
	b, err := json.MarshalIndent(struct {
		Tables map[string]string `json:"tables"`
	}{s.pos}, "", "  ")
	if err != nil {
		return err
	}
	tmp := s.path + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	_, err = f.Write(append(b, '\n'))
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, s.path)
	}
	if err != nil {
		return fmt.Errorf("replicate state %s: %w", s.path, err)
	}
	if d, err := os.Open(filepath.Dir(s.path)); err == nil {
		_ = d.Sync()
		_ = d.Close()
	}
	return nil
}

// replicateProgress shows the tables' progress: a live line on a
// terminal, else a line every 5 s while changes flow. Without a
// terminal, a table's finished copy and its catching up (after changes)
// are also told at once, on lines of their own.
type replicateProgress struct {
	io    *stdio
	mu    sync.Mutex
	byTab map[string]replicate.Progress
	last  time.Time
}

func newReplicateProgress(io *stdio) *replicateProgress {
	return &replicateProgress{io: io, byTab: map[string]replicate.Progress{}, last: time.Now()}
}

func (r *replicateProgress) update(p replicate.Progress) {
	r.mu.Lock()
	defer r.mu.Unlock()
	prev, seen := r.byTab[p.Table]
	r.byTab[p.Table] = p
	if !r.io.errTerminal {
		if p.CopyTime > 0 && !seen {
			rate := float64(p.Copied) / p.CopyTime.Seconds()
			fmt.Fprintf(r.io.stderr, "replicate: %s: copied %s entities in %s (%s/s)\n", p.Table, count(p.Copied), p.CopyTime.Round(time.Millisecond), count(int64(rate)))
		}
		if p.CaughtUp && (!prev.CaughtUp || prev.Applied != p.Applied) {
			fmt.Fprintf(r.io.stderr, "replicate: %s: caught up: %s applied, lag 0\n", p.Table, count(p.Applied))
			return
		}
	}
	every := 5 * time.Second
	if r.io.errTerminal {
		every = progressEvery
	}
	redraw := r.io.errTerminal && p.CaughtUp != prev.CaughtUp
	if !redraw && (time.Since(r.last) < every || p.CaughtUp) {
		return
	}
	r.last = time.Now()
	if r.io.errTerminal {
		fmt.Fprint(r.io.stderr, "\r\x1b[K"+r.line())
	} else {
		fmt.Fprintln(r.io.stderr, r.line())
	}
}

func (r *replicateProgress) line() string {
	names := make([]string, 0, len(r.byTab))
	for n := range r.byTab {
		names = append(names, n)
	}
	sort.Strings(names)
	parts := make([]string, 0, len(names))
	for _, n := range names {
		p := r.byTab[n]
		s := fmt.Sprintf("%s: %s applied", n, count(p.Applied))
		if p.Copied > 0 {
			s = fmt.Sprintf("%s: %s copied, %s applied", n, count(p.Copied), count(p.Applied))
		}
		if p.CaughtUp {
			s += ", caught up"
		} else {
			s += fmt.Sprintf(", lag %s changes %.1fs", count(int64(p.LagChanges)), p.LagTime.Seconds())
		}
		parts = append(parts, s)
	}
	return "replicate: " + strings.Join(parts, "; ")
}

func (r *replicateProgress) finish() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.io.errTerminal {
		fmt.Fprint(r.io.stderr, "\r\x1b[K")
	}
	if len(r.byTab) > 0 {
		fmt.Fprintln(r.io.stderr, r.line())
	}
}
