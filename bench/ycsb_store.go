package main

// The YCSB sides: every embedded store holds records of ten 100-byte
// fields under their YCSB key. Each method does the same logical work on
// every side, as YCSB's DB interface defines it (read all fields, update
// one field, insert a record, scan n records from a key).

import (
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/cockroachdb/pebble/v2"
	"github.com/dgraph-io/badger/v4"
	"github.com/tablestore/tablestore"
	bolt "go.etcd.io/bbolt"
)

// A ycsbStore is one side of the YCSB comparison opened on a directory.
type ycsbStore interface {
	// load writes a batch of new records atomically (the load phase).
	load(keys []string, recs [][][]byte) error
	// insert writes one new record. Like YCSB's key-value bindings, and
	// like every other side here, it does not check that the key is new
	// (YCSB never inserts a key twice): tablestore upserts.
	insert(key string, fields [][]byte) error
	// read decodes every field of a record and returns how many it has.
	read(key string) (int, error)
	// update sets one field of a record and keeps the others.
	update(key string, field int, val []byte) error
	// scan decodes up to n records from key on, in key order, and
	// returns how many it read.
	scan(key string, n int) (int, error)
	close() error
}

// The YCSB side names; the HTTP sides are ycsbServer and ycsbAzurite.
const (
	sideBadger  = "badger"
	sideBbolt   = "bbolt"
	ycsbServer  = "server"
	ycsbAzurite = "azurite"
)

// ycsbSides are the embedded sides in report order.
var ycsbSides = []string{sideTablestore, sideTyped, sidePebble, sideBadger, sideBbolt, sideSQLite}

func openYCSB(side, dir string, s storeSettings) (ycsbStore, error) {
	switch side {
	case sideTablestore, sideTyped:
		st, err := openTablestore(dir, s)
		if err != nil {
			return nil, err
		}
		m := &ycsbMaps{st.(*tablestoreStore).t, st.(*tablestoreStore).db}
		if side == sideTyped {
			return ycsbTyped{m}, nil
		}
		return m, nil
	case sidePebble:
		p, err := openPebble(dir, s)
		if err != nil {
			return nil, err
		}
		return &ycsbPebble{p.(*pebbleStore)}, nil
	case sideBadger:
		return openYCSBBadger(dir, s)
	case sideBbolt:
		return openYCSBBbolt(dir, s)
	case sideSQLite:
		return openYCSBSQLite(dir, s)
	}
	return nil, fmt.Errorf("bench: unknown YCSB side %q", side)
}

// encodeYCSB appends a record in the raw value format (rawvalue.go):
// ten string properties field0..field9.
func encodeYCSB(b []byte, fields [][]byte) []byte {
	b = append(b, make([]byte, 8)...) // no timestamp: YCSB keeps none
	b = append(b, byte(len(fields)))
	for i, f := range fields {
		b = appendRawName(b, ycsbFieldNames[i], rawString)
		b = append(binary.AppendUvarint(b, uint64(len(f))), f...)
	}
	return b
}

// decodeYCSB decodes a raw record into its fields as strings, as an
// application reading a record into a struct does; it returns how many
// fields it decoded.
func decodeYCSB(v []byte, out *[ycsbFieldCount]string) (int, error) {
	_, r, err := newRawReader(v)
	if err != nil {
		return 0, err
	}
	n := 0
	for {
		f, ok, err := r.next()
		if err != nil {
			return n, err
		}
		if !ok {
			return n, nil
		}
		if n >= ycsbFieldCount || f.typ != rawString {
			return n, errRawCorrupt
		}
		out[n] = string(f.payload)
		n++
	}
}

// patchYCSB returns the raw record v with field set to val.
func patchYCSB(v []byte, field int, val []byte) ([]byte, error) {
	var cur [ycsbFieldCount]string
	n, err := decodeYCSB(v, &cur)
	if err != nil {
		return nil, err
	}
	fields := make([][]byte, n)
	for i := range n {
		fields[i] = []byte(cur[i])
	}
	fields[field] = val
	return encodeYCSB(make([]byte, 0, len(v)), fields), nil
}

// ycsbMaps is tablestore through its map API: one partition, the YCSB
// key as RowKey, fields as String properties.
type ycsbMaps struct {
	t  *tablestore.Table
	db *tablestore.DB
}

func ycsbEntity(key string, fields [][]byte) *tablestore.Entity {
	props := make(map[string]any, len(fields))
	for i, f := range fields {
		props[ycsbFieldNames[i]] = string(f)
	}
	return &tablestore.Entity{PartitionKey: ycsbPartition, RowKey: key, Properties: props}
}

func (s *ycsbMaps) load(keys []string, recs [][][]byte) error {
	actions := make([]tablestore.TransactionAction, len(keys))
	for i := range keys {
		actions[i] = tablestore.TransactionAction{Type: tablestore.ActionUpsertReplace, Entity: ycsbEntity(keys[i], recs[i])}
	}
	return s.t.SubmitTransaction(context.Background(), actions)
}

func (s *ycsbMaps) insert(key string, fields [][]byte) error {
	return s.t.Upsert(context.Background(), ycsbEntity(key, fields), tablestore.Replace)
}

func (s *ycsbMaps) read(key string) (int, error) {
	e, err := s.t.Get(context.Background(), ycsbPartition, key, nil)
	if err != nil {
		return 0, err
	}
	return len(e.Properties), nil
}

func (s *ycsbMaps) update(key string, field int, val []byte) error {
	e := &tablestore.Entity{PartitionKey: ycsbPartition, RowKey: key,
		Properties: map[string]any{ycsbFieldNames[field]: string(val)}}
	return s.t.Update(context.Background(), e, tablestore.Merge, tablestore.ETagAny)
}

// scanQuery is the query of a scan: the partition from key on, n at most.
func scanQuery(key string, n int) tablestore.Query {
	return tablestore.Query{Filter: "PartitionKey eq '" + ycsbPartition + "' and RowKey ge '" + key + "'", Top: n, Limit: n}
}

func (s *ycsbMaps) scan(key string, n int) (int, error) {
	got := 0
	for e, err := range s.t.Query(context.Background(), scanQuery(key, n)) {
		if err != nil {
			return got, err
		}
		if len(e.Properties) != ycsbFieldCount {
			return got, fmt.Errorf("bench: scan read %d fields", len(e.Properties))
		}
		got++
	}
	return got, nil
}

func (s *ycsbMaps) close() error { return s.db.Close() }

// ycsbRow is a YCSB record in tablestore's struct mapping; omitempty
// lets an update merge the one field it sets.
type ycsbRow struct {
	PartitionKey, RowKey string
	F0                   string `table:"field0,omitempty"`
	F1                   string `table:"field1,omitempty"`
	F2                   string `table:"field2,omitempty"`
	F3                   string `table:"field3,omitempty"`
	F4                   string `table:"field4,omitempty"`
	F5                   string `table:"field5,omitempty"`
	F6                   string `table:"field6,omitempty"`
	F7                   string `table:"field7,omitempty"`
	F8                   string `table:"field8,omitempty"`
	F9                   string `table:"field9,omitempty"`
}

func (r *ycsbRow) field(i int) *string {
	return [...]*string{&r.F0, &r.F1, &r.F2, &r.F3, &r.F4, &r.F5, &r.F6, &r.F7, &r.F8, &r.F9}[i]
}

// count is how many fields hold a value.
func (r *ycsbRow) count() int {
	n := 0
	for i := range ycsbFieldCount {
		if *r.field(i) != "" {
			n++
		}
	}
	return n
}

func newYCSBRow(key string, fields [][]byte) *ycsbRow {
	r := &ycsbRow{PartitionKey: ycsbPartition, RowKey: key}
	for i, f := range fields {
		*r.field(i) = string(f)
	}
	return r
}

// ycsbTyped is tablestore through its typed API.
type ycsbTyped struct{ *ycsbMaps }

func (s ycsbTyped) load(keys []string, recs [][][]byte) error {
	actions := make([]tablestore.TransactionAction, len(keys))
	for i := range keys {
		actions[i] = tablestore.TransactionAction{Type: tablestore.ActionUpsertReplace, Entity: tablestore.StructEntity(newYCSBRow(keys[i], recs[i]))}
	}
	return s.t.SubmitTransaction(context.Background(), actions)
}

func (s ycsbTyped) insert(key string, fields [][]byte) error {
	return s.t.UpsertStruct(context.Background(), newYCSBRow(key, fields), tablestore.Replace)
}

func (s ycsbTyped) read(key string) (int, error) {
	r, err := tablestore.GetStruct[ycsbRow](context.Background(), s.t, ycsbPartition, key, nil)
	return r.count(), err
}

func (s ycsbTyped) update(key string, field int, val []byte) error {
	r := &ycsbRow{PartitionKey: ycsbPartition, RowKey: key}
	*r.field(field) = string(val)
	return s.t.UpdateStruct(context.Background(), r, tablestore.Merge, tablestore.ETagAny)
}

func (s ycsbTyped) scan(key string, n int) (int, error) {
	got := 0
	for r, err := range tablestore.QueryStructs[ycsbRow](context.Background(), s.t, scanQuery(key, n)) {
		if err != nil {
			return got, err
		}
		if r.count() != ycsbFieldCount {
			return got, fmt.Errorf("bench: scan read %d fields", r.count())
		}
		got++
	}
	return got, nil
}

// ycsbPebble is raw Pebble, the floor: keys in tablestore's layout,
// values in the raw format, an update a get, patch and set under the
// partition's lock (tablestore's merge does the same work).
type ycsbPebble struct{ p *pebbleStore }

func (s *ycsbPebble) load(keys []string, recs [][][]byte) error {
	b := s.p.db.NewBatch()
	defer b.Close()
	var k, v []byte
	for i := range keys {
		k = rawKey(k[:0], ycsbPartition, keys[i])
		v = encodeYCSB(v[:0], recs[i])
		if err := b.Set(k, v, nil); err != nil {
			return err
		}
	}
	return b.Commit(s.p.wo)
}

func (s *ycsbPebble) insert(key string, fields [][]byte) error {
	return s.p.db.Set(rawKey(nil, ycsbPartition, key), encodeYCSB(nil, fields), s.p.wo)
}

func (s *ycsbPebble) read(key string) (int, error) {
	var kb [64]byte
	v, closer, err := s.p.db.Get(rawKey(kb[:0], ycsbPartition, key))
	if err != nil {
		return 0, err
	}
	defer closer.Close()
	var out [ycsbFieldCount]string
	return decodeYCSB(v, &out)
}

func (s *ycsbPebble) update(key string, field int, val []byte) error {
	k := rawKey(nil, ycsbPartition, key)
	mu := s.p.lockFor(ycsbPartition)
	mu.Lock()
	defer mu.Unlock()
	v, closer, err := s.p.db.Get(k)
	if err != nil {
		return err
	}
	nv, err := patchYCSB(v, field, val)
	closer.Close()
	if err != nil {
		return err
	}
	return s.p.db.Set(k, nv, s.p.wo)
}

func (s *ycsbPebble) scan(key string, n int) (int, error) {
	_, hi := rawPartitionBounds(ycsbPartition)
	it, err := s.p.db.NewIter(&pebble.IterOptions{LowerBound: rawKey(nil, ycsbPartition, key), UpperBound: hi})
	if err != nil {
		return 0, err
	}
	got := 0
	var out [ycsbFieldCount]string
	for valid := it.First(); valid && got < n; valid = it.Next() {
		if _, err := decodeYCSB(it.Value(), &out); err != nil {
			it.Close()
			return got, err
		}
		got++
	}
	if err := it.Error(); err != nil {
		it.Close()
		return got, err
	}
	return got, it.Close()
}

func (s *ycsbPebble) close() error { return s.p.close() }

// ycsbBadger is Badger with its defaults but for the block cache (the
// run's cache size, as every side) and, synced, SyncWrites. Values are
// the raw format under the YCSB key.
type ycsbBadger struct{ db *badger.DB }

func openYCSBBadger(dir string, s storeSettings) (ycsbStore, error) {
	o := badger.DefaultOptions(filepath.Join(dir, "badger")).
		WithSyncWrites(s.sync).
		WithBlockCacheSize(s.cacheSize).
		WithLogger(nil)
	db, err := badger.Open(o)
	if err != nil {
		return nil, err
	}
	return &ycsbBadger{db}, nil
}

func (s *ycsbBadger) load(keys []string, recs [][][]byte) error {
	return s.db.Update(func(txn *badger.Txn) error {
		for i := range keys {
			if err := txn.Set([]byte(keys[i]), encodeYCSB(nil, recs[i])); err != nil {
				return err
			}
		}
		return nil
	})
}

func (s *ycsbBadger) insert(key string, fields [][]byte) error {
	return s.db.Update(func(txn *badger.Txn) error { return txn.Set([]byte(key), encodeYCSB(nil, fields)) })
}

func (s *ycsbBadger) read(key string) (n int, err error) {
	err = s.db.View(func(txn *badger.Txn) error {
		item, err := txn.Get([]byte(key))
		if err != nil {
			return err
		}
		return item.Value(func(v []byte) error {
			var out [ycsbFieldCount]string
			n, err = decodeYCSB(v, &out)
			return err
		})
	})
	return n, err
}

func (s *ycsbBadger) update(key string, field int, val []byte) error {
	return s.db.Update(func(txn *badger.Txn) error {
		item, err := txn.Get([]byte(key))
		if err != nil {
			return err
		}
		var nv []byte
		if err := item.Value(func(v []byte) error {
			nv, err = patchYCSB(v, field, val)
			return err
		}); err != nil {
			return err
		}
		return txn.Set([]byte(key), nv)
	})
}

func (s *ycsbBadger) scan(key string, n int) (got int, err error) {
	err = s.db.View(func(txn *badger.Txn) error {
		o := badger.DefaultIteratorOptions
		o.PrefetchSize = n
		it := txn.NewIterator(o)
		defer it.Close()
		var out [ycsbFieldCount]string
		for it.Seek([]byte(key)); it.Valid() && got < n; it.Next() {
			if err := it.Item().Value(func(v []byte) error {
				_, err := decodeYCSB(v, &out)
				return err
			}); err != nil {
				return err
			}
			got++
		}
		return nil
	})
	return got, err
}

func (s *ycsbBadger) close() error { return s.db.Close() }

// ycsbBbolt is bbolt with its defaults (a B+tree in one mmapped file,
// fsync at every commit) or NoSync; it has no cache of its own: reads
// go through the mmap, so the OS page cache holds what it reads.
type ycsbBbolt struct{ db *bolt.DB }

var ycsbBucket = []byte("usertable")

func openYCSBBbolt(dir string, s storeSettings) (ycsbStore, error) {
	db, err := bolt.Open(filepath.Join(dir, "bbolt.db"), 0o600, &bolt.Options{NoSync: !s.sync})
	if err != nil {
		return nil, err
	}
	if err := db.Update(func(tx *bolt.Tx) error {
		_, err := tx.CreateBucketIfNotExists(ycsbBucket)
		return err
	}); err != nil {
		db.Close()
		return nil, err
	}
	return &ycsbBbolt{db}, nil
}

func (s *ycsbBbolt) load(keys []string, recs [][][]byte) error {
	return s.db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(ycsbBucket)
		for i := range keys {
			if err := b.Put([]byte(keys[i]), encodeYCSB(nil, recs[i])); err != nil {
				return err
			}
		}
		return nil
	})
}

func (s *ycsbBbolt) insert(key string, fields [][]byte) error {
	return s.db.Update(func(tx *bolt.Tx) error {
		return tx.Bucket(ycsbBucket).Put([]byte(key), encodeYCSB(nil, fields))
	})
}

func (s *ycsbBbolt) read(key string) (n int, err error) {
	err = s.db.View(func(tx *bolt.Tx) error {
		v := tx.Bucket(ycsbBucket).Get([]byte(key))
		if v == nil {
			return errNotFound
		}
		var out [ycsbFieldCount]string
		n, err = decodeYCSB(v, &out)
		return err
	})
	return n, err
}

func (s *ycsbBbolt) update(key string, field int, val []byte) error {
	return s.db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(ycsbBucket)
		v := b.Get([]byte(key))
		if v == nil {
			return errNotFound
		}
		nv, err := patchYCSB(v, field, val)
		if err != nil {
			return err
		}
		return b.Put([]byte(key), nv)
	})
}

func (s *ycsbBbolt) scan(key string, n int) (got int, err error) {
	err = s.db.View(func(tx *bolt.Tx) error {
		c := tx.Bucket(ycsbBucket).Cursor()
		var out [ycsbFieldCount]string
		for k, v := c.Seek([]byte(key)); k != nil && got < n; k, v = c.Next() {
			if _, err := decodeYCSB(v, &out); err != nil {
				return err
			}
			got++
		}
		return nil
	})
	return got, err
}

func (s *ycsbBbolt) close() error { return s.db.Close() }

// ycsbSQLite is SQLite as YCSB's JDBC binding lays a record out: a
// table with the key as primary key and one TEXT column per field; an
// update sets one column. It is a rowid table: WITHOUT ROWID keeps rows
// in the key's B-tree, where a 1 KB row spills to an overflow page of
// its own (4.7 KB on disk per record). Journal, sync and cache as the
// other SQLite side (sqliteDSN).
type ycsbSQLite struct {
	w, r            *sql.DB
	ins, get, scanQ *sql.Stmt
	upd             [ycsbFieldCount]*sql.Stmt
}

func openYCSBSQLite(dir string, s storeSettings) (ycsbStore, error) {
	path := filepath.Join(dir, "ycsb.sqlite")
	w, err := sql.Open("sqlite", sqliteDSN(path, s, true))
	if err != nil {
		return nil, err
	}
	w.SetMaxOpenConns(1)
	st := &ycsbSQLite{w: w}
	cols := strings.Join(ycsbFieldNames, ", ")
	if _, err := w.Exec(`CREATE TABLE IF NOT EXISTS usertable (ykey TEXT PRIMARY KEY, ` +
		strings.Join(ycsbFieldNames, " TEXT, ") + ` TEXT)`); err != nil {
		w.Close()
		return nil, err
	}
	if st.r, err = sql.Open("sqlite", sqliteDSN(path, s, false)); err != nil {
		w.Close()
		return nil, err
	}
	st.r.SetMaxOpenConns(8)
	st.r.SetMaxIdleConns(8)
	prep := func(db *sql.DB, dst **sql.Stmt, q string) {
		if err == nil {
			*dst, err = db.Prepare(q)
		}
	}
	prep(w, &st.ins, `INSERT INTO usertable (ykey, `+cols+`) VALUES (?`+strings.Repeat(", ?", ycsbFieldCount)+`)`)
	prep(st.r, &st.get, `SELECT `+cols+` FROM usertable WHERE ykey = ?`)
	prep(st.r, &st.scanQ, `SELECT ykey, `+cols+` FROM usertable WHERE ykey >= ? ORDER BY ykey LIMIT ?`)
	for i, name := range ycsbFieldNames {
		prep(w, &st.upd[i], `UPDATE usertable SET `+name+` = ? WHERE ykey = ?`)
	}
	if err != nil {
		st.close()
		return nil, fmt.Errorf("bench: sqlite prepare: %w", err)
	}
	return st, nil
}

func insertArgs(key string, fields [][]byte) []any {
	args := make([]any, 0, 1+len(fields))
	args = append(args, key)
	for _, f := range fields {
		args = append(args, string(f))
	}
	return args
}

func (s *ycsbSQLite) load(keys []string, recs [][][]byte) error {
	tx, err := s.w.Begin()
	if err != nil {
		return err
	}
	ins := tx.Stmt(s.ins)
	for i := range keys {
		if _, err := ins.Exec(insertArgs(keys[i], recs[i])...); err != nil {
			tx.Rollback()
			return err
		}
	}
	return tx.Commit()
}

func (s *ycsbSQLite) insert(key string, fields [][]byte) error {
	_, err := s.ins.Exec(insertArgs(key, fields)...)
	return err
}

// scanFields scans one row's fields into out and returns how many.
func scanFields(sc func(...any) error, key *string, out *[ycsbFieldCount]string) (int, error) {
	dst := make([]any, 0, ycsbFieldCount+1)
	if key != nil {
		dst = append(dst, key)
	}
	for i := range out {
		dst = append(dst, &out[i])
	}
	return ycsbFieldCount, sc(dst...)
}

func (s *ycsbSQLite) read(key string) (int, error) {
	var out [ycsbFieldCount]string
	n, err := scanFields(s.get.QueryRow(key).Scan, nil, &out)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, errNotFound
	}
	return n, err
}

func (s *ycsbSQLite) update(key string, field int, val []byte) error {
	res, err := s.upd[field].Exec(string(val), key)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return errNotFound
	}
	return nil
}

func (s *ycsbSQLite) scan(key string, n int) (int, error) {
	rows, err := s.scanQ.Query(key, n)
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	got := 0
	var k string
	var out [ycsbFieldCount]string
	for rows.Next() {
		if _, err := scanFields(rows.Scan, &k, &out); err != nil {
			return got, err
		}
		got++
	}
	return got, rows.Err()
}

func (s *ycsbSQLite) close() error {
	for _, st := range append([]*sql.Stmt{s.ins, s.get, s.scanQ}, s.upd[:]...) {
		if st != nil {
			st.Close()
		}
	}
	if s.r != nil {
		s.r.Close()
	}
	return s.w.Close()
}
