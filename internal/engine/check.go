package engine

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/sstable"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cockroachdb/pebble/v2/vfs/atomicfs"
	"github.com/tablestore/tablestore/driver"
	"github.com/tablestore/tablestore/internal/keys"
	"golang.org/x/sync/errgroup"
)

var _ driver.Checker = (*Engine)(nil)

// Check implements driver.Checker. It reads, straight from disk (past
// the block cache), every block of every live sstable with its checksum,
// every record of the current MANIFEST and of each WAL, then scans every
// key through Pebble and decodes every record, and compares every ready
// index with its table (index_check.go). It writes nothing; the
// store stays usable meanwhile. Damage found also records the store's
// fault, as any read that meets it does.
func (db *Engine) Check(ctx context.Context) (rep driver.CheckReport, err error) {
	release, err := db.enter(ctx)
	if err != nil {
		return driver.CheckReport{}, err
	}
	defer release()
	defer db.recoverStop("check", &err)
	c := checker{db: db, ctx: ctx, damaged: map[string]*driver.DamagedFile{}}
	if err := c.run(); err != nil {
		return driver.CheckReport{}, err
	}
	return c.report(), nil
}

// CheckDir checks the closed store in dir without writing to it. When
// Pebble can open it read-only, it runs Check; otherwise (a damaged
// MANIFEST or WAL stops Pebble from opening) it verifies every file in dir
// on its own and cannot say which tables a file holds. Errors:
// driver.ErrNotStore, I/O and lock errors; damage is in the report. A
// store on read-only media is checked too: its lock file cannot be
// taken, and no process can write the store meanwhile (see readOnlyFS).
func CheckDir(ctx context.Context, dir string, opts Options) (driver.CheckReport, error) {
	return checkDir(ctx, vfs.Default, dir, opts)
}

func checkDir(ctx context.Context, fs vfs.FS, dir string, opts Options) (driver.CheckReport, error) {
	fs, enc, err := storeFS(readOnlyFS{fs}, dir, opts.Keys)
	if err != nil {
		return driver.CheckReport{}, err
	}
	opts.encrypted = enc
	fresh, err := inspectDir(fs, dir)
	switch {
	case err == nil && fresh:
		return driver.CheckReport{}, fmt.Errorf("%w: %q holds no store", driver.ErrNotStore, dir)
	case err == nil:
		opts.readOnly = true
		db, err := open(dir, fs, opts)
		if err == nil {
			rep, err := db.Check(ctx)
			return rep, errors.Join(err, db.Close())
		}
		if !errors.Is(err, driver.ErrCorrupt) {
			return driver.CheckReport{}, err
		}
	case !errors.Is(err, driver.ErrCorrupt):
		return driver.CheckReport{}, err
	}
	c := checker{ctx: ctx, fs: fs, dir: dir, damaged: map[string]*driver.DamagedFile{}}
	if err := c.files(nil); err != nil {
		return driver.CheckReport{}, err
	}
	return c.report(), nil
}

// checker gathers one check's findings.
type checker struct {
	db       *Engine // nil for a store Pebble cannot open
	ctx      context.Context
	fs       vfs.FS
	dir      string
	mu       sync.Mutex                     // guards damaged, files_, entities
	damaged  map[string]*driver.DamagedFile // by path, or "records "+table
	files_   int
	entities int
}

func (c *checker) add(path, kind string, tables []string, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	key := path
	if path == "" {
		key = kind + " " + strings.Join(tables, ",")
	}
	if d, ok := c.damaged[key]; ok {
		d.Err = errors.Join(d.Err, err)
		return
	}
	c.damaged[key] = &driver.DamagedFile{Path: path, Kind: kind, Tables: tables, Err: err}
	if c.db != nil {
		c.db.setFault(&driver.CorruptError{File: path, Op: "check", Err: err})
	}
}

func (c *checker) report() driver.CheckReport {
	rep := driver.CheckReport{Files: c.files_, Entities: c.entities}
	for _, d := range c.damaged {
		rep.Damaged = append(rep.Damaged, *d)
	}
	slices.SortFunc(rep.Damaged, func(a, b driver.DamagedFile) int {
		return strings.Compare(a.Path+a.Kind+strings.Join(a.Tables, ","), b.Path+b.Kind+strings.Join(b.Tables, ","))
	})
	return rep
}

// LiveSSTables returns the file names of the sstables in the store's
// current version (an sstable a compaction replaced may stay on disk a
// little longer), each with the tables it holds.
func (db *Engine) LiveSSTables() (map[string][]string, error) {
	release, err := db.enter(context.Background())
	if err != nil {
		return nil, err
	}
	defer release()
	return db.liveSSTables()
}

func (db *Engine) liveSSTables() (map[string][]string, error) {
	infos, err := db.pdb.SSTables()
	if err != nil {
		return nil, db.storageErr("list sstables", err)
	}
	live := map[string][]string{}
	for _, level := range infos {
		for _, t := range level {
			name := fmt.Sprintf("%06d.sst", uint64(t.BackingSSTNum))
			live[name] = db.tablesInSpan(t.Smallest.UserKey, t.Largest.UserKey)
		}
	}
	return live, nil
}

// run checks an open store.
func (c *checker) run() error {
	db := c.db
	c.fs, c.dir = db.fs, db.dir
	live, err := db.liveSSTables()
	if err != nil {
		return err
	}
	// The file checks and the scan read the store independently.
	var g errgroup.Group
	g.Go(func() error { return c.files(live) })
	g.Go(c.scan)
	return g.Wait()
}

// files verifies the current MANIFEST, every WAL, the CLOCK file and the
// sstables: those in live (name -> tables) for an open store, every *.sst
// for live nil.
func (c *checker) files(live map[string][]string) error {
	ls, err := c.fs.List(c.dir)
	if err != nil {
		return fmt.Errorf("tablestore: check: %w", err)
	}
	slices.Sort(ls)
	// sstables are verified in parallel, the rest in turn.
	var g errgroup.Group
	g.SetLimit(runtime.GOMAXPROCS(0))
	defer func() { _ = g.Wait() }()
	manifest, _ := atomicfs.ReadMarker(c.fs, c.dir, "manifest")
	if manifest == "" && c.dir != "" {
		c.add(c.dir, "manifest", nil, errors.New("no MANIFEST marker"))
	}
	for _, name := range ls {
		if err := c.ctx.Err(); err != nil {
			return err
		}
		path := c.fs.PathJoin(c.dir, name)
		var err error
		kind, tables := "", []string(nil)
		if strings.HasSuffix(name, ".sst") {
			t, ok := live[name]
			if live != nil && !ok {
				continue // obsolete, or newer than the list
			}
			g.Go(func() error {
				c.done(path, "sstable", t, verifySSTable(c.ctx, c.fs, path))
				return nil
			})
			continue
		}
		switch {
		case name == manifest:
			kind, err = "manifest", verifyLog(c.fs, path, false)
		case strings.HasSuffix(name, ".log"):
			kind, err = "wal", verifyLog(c.fs, path, true)
		case name == clockFileName:
			kind = "clock"
			_, err = readClockFile(c.fs, c.dir)
		default:
			continue
		}
		c.done(path, kind, tables, err)
	}
	return g.Wait()
}

// done counts one checked file and records its damage.
func (c *checker) done(path, kind string, tables []string, err error) {
	if err != nil && isNotExist(err) {
		return // deleted meanwhile (compacted, or a WAL recycled)
	}
	c.mu.Lock()
	c.files_++
	c.mu.Unlock()
	if err != nil {
		c.add(path, kind, tables, err)
	}
}

// verifySSTable reads every block of one sstable, with its checksum,
// straight from the file.
func verifySSTable(ctx context.Context, fs vfs.FS, path string) error {
	f, err := fs.Open(path)
	if err != nil {
		return err
	}
	readable, err := sstable.NewSimpleReadable(f)
	if err != nil {
		_ = f.Close()
		return err
	}
	r, err := sstable.NewReader(ctx, readable, sstable.ReaderOptions{})
	if err != nil {
		_ = readable.Close()
		return err
	}
	return errors.Join(r.ValidateBlockChecksums(), r.Close())
}

// scan reads every key of the store through Pebble and decodes every
// record, so damage the file checks cannot see (memtables rebuilt from the
// WAL, records that do not decode) shows too.
func (c *checker) scan() error {
	names := *c.db.names.Load()
	ids := make([]uint64, 0, len(names))
	for id := range names {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		if err := c.scanTable(id, names[id]); err != nil {
			return err
		}
		if err := c.checkIndexes(id, names[id]); err != nil {
			return err
		}
	}
	return nil
}

// scanTable reads one table's keys, in parts read in parallel; damage
// ends the scan of a part, not the check.
func (c *checker) scanTable(id uint64, name string) error {
	lower, upper := keys.EntitySpan(id)
	bounds, err := c.splitSpan(lower, upper, runtime.GOMAXPROCS(0))
	if err != nil {
		c.addRead(err)
		return nil
	}
	bads := make([]error, len(bounds)-1)
	var g errgroup.Group
	for i := range bads {
		g.Go(func() (err error) {
			bads[i], err = c.scanSpan(bounds[i], bounds[i+1])
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	if bad := errors.Join(bads...); bad != nil {
		c.add("", "records", []string{name}, bad)
	}
	return nil
}

// splitSpan returns the bounds of up to n parts of [lower, upper): points
// spread evenly between its first and its last key, compared as numbers.
func (c *checker) splitSpan(lower, upper []byte, n int) ([][]byte, error) {
	bounds := [][]byte{lower, upper}
	if n < 2 {
		return bounds, nil
	}
	it, err := c.db.pdb.NewIter(&pebble.IterOptions{LowerBound: lower, UpperBound: upper})
	if err != nil {
		return nil, err
	}
	var first, last []byte
	if it.First() {
		first = slices.Clone(it.Key())
		if it.Last() {
			last = slices.Clone(it.Key())
		}
	}
	if err := errors.Join(it.Error(), it.Close()); err != nil || last == nil {
		return bounds, err
	}
	prefix := 0
	for prefix < len(first) && prefix < len(last) && first[prefix] == last[prefix] {
		prefix++
	}
	num := func(k []byte) uint64 {
		var b [8]byte
		copy(b[:], k[prefix:])
		return binary.BigEndian.Uint64(b[:])
	}
	lo, hi := num(first), num(last)
	if hi <= lo {
		return bounds, nil
	}
	bounds = bounds[:1]
	for i := 1; i < n; i++ {
		p := binary.BigEndian.AppendUint64(slices.Clone(first[:prefix]), lo+(hi-lo)/uint64(n)*uint64(i))
		// Parts stay ordered and inside the span.
		if prev := bounds[len(bounds)-1]; bytes.Compare(p, prev) < 0 {
			p = prev
		}
		if bytes.Compare(p, upper) > 0 {
			p = upper
		}
		bounds = append(bounds, p)
	}
	return append(bounds, upper), nil
}

// scanSpan reads the keys of [lower, upper), counts the entities and
// returns the records that do not decode; damage is recorded.
func (c *checker) scanSpan(lower, upper []byte) (bad error, err error) {
	it, err := c.db.pdb.NewIter(&pebble.IterOptions{LowerBound: lower, UpperBound: upper})
	if err != nil {
		c.addRead(err)
		return nil, nil
	}
	defer it.Close()
	n, counted := 0, 0
	defer func() {
		c.mu.Lock()
		c.entities += counted
		c.mu.Unlock()
	}()
	for valid := it.First(); valid; valid = it.Next() {
		if n++; n%4096 == 0 {
			if err := c.ctx.Err(); err != nil {
				return nil, err
			}
		}
		_, _, _, err := keys.Split(it.Key())
		if err == nil {
			var val []byte
			if val, err = it.ValueAndErr(); err == nil {
				_, err = driver.Record(val).Properties()
			}
		}
		if err != nil {
			if pebble.IsCorruptionError(err) {
				c.addRead(err)
				return bad, nil
			}
			bad = errors.Join(bad, fmt.Errorf("key %q: %w", it.Key(), err))
			continue
		}
		counted++
	}
	if err := it.Error(); err != nil {
		c.addRead(err)
	}
	return bad, nil
}

// addRead records damage a read through Pebble met.
func (c *checker) addRead(err error) {
	path := ""
	var tables []string
	if info := pebble.ExtractDataCorruptionInfo(err); info != nil {
		path, err = info.Path, info.Details
		tables = c.db.tablesInSpan(info.Bounds.Start, info.Bounds.End.Key)
	}
	c.mu.Lock()
	_, found := c.damaged[path]
	c.mu.Unlock()
	if found && path != "" {
		return // already found by the file checks
	}
	c.add(path, "sstable", tables, err)
}

// readOnlyFS is the FS of a check: Pebble takes the store's lock file even
// when it opens read-only, which fails on read-only media (EROFS). Where
// the lock cannot be taken because the file system is read-only, the check
// goes on without it, since no process can write such a store.
type readOnlyFS struct{ vfs.FS }

func (fs readOnlyFS) Lock(name string) (io.Closer, error) {
	l, err := fs.FS.Lock(name)
	if err != nil && errors.Is(err, syscall.EROFS) {
		return io.NopCloser(nil), nil
	}
	return l, err
}

func (fs readOnlyFS) Unwrap() vfs.FS { return fs.FS }
