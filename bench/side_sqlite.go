package main

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"path/filepath"
	"strings"

	"modernc.org/sqlite"
)

// sqliteStore is the SQLite comparator, through database/sql and the
// pure-Go modernc.org/sqlite driver: one WITHOUT ROWID table keyed by
// (PartitionKey, RowKey), properties stored as the same raw-format blob
// the raw Pebble side stores, a Version column for optimistic
// concurrency, WAL journal, synchronous=FULL when syncing and OFF when
// not.
//
// Writes go through a pool of one connection (SQLite has a single
// writer; queueing in Go beats spinning on SQLITE_BUSY); reads use their
// own pool.
type sqliteStore struct {
	w, r *sql.DB

	upsert, ins, update *sql.Stmt
	getOne, rng, part   *sql.Stmt
	filter              *sql.Stmt
	pageFirst, pageNext *sql.Stmt
}

// sqliteTable is the schema of the entity table.
const sqliteTable = `CREATE TABLE IF NOT EXISTS entities (
	PartitionKey TEXT NOT NULL,
	RowKey TEXT NOT NULL,
	Version INTEGER NOT NULL,
	Props BLOB NOT NULL,
	PRIMARY KEY (PartitionKey, RowKey)
) WITHOUT ROWID`

func init() {
	// raw_int32(props, name) evaluates a property lookup on the stored
	// blob inside SQLite's scan, as tablestore evaluates filters on its
	// encoded bytes. It returns NULL when the property is absent.
	sqlite.MustRegisterDeterministicScalarFunction("raw_int32", 2,
		func(_ *sqlite.FunctionContext, args []driver.Value) (driver.Value, error) {
			blob, ok := args[0].([]byte)
			name, ok2 := args[1].(string)
			if !ok || !ok2 {
				return nil, fmt.Errorf("bench: raw_int32 wants (blob, text)")
			}
			v, found, err := rawInt32Property(blob, name)
			if err != nil || !found {
				return nil, err
			}
			return int64(v), nil
		})
}

func sqliteDSN(path string, s storeSettings, write bool) string {
	syncMode := "OFF"
	if s.sync {
		syncMode = "FULL"
	}
	q := []string{
		"_pragma=journal_mode(WAL)",
		"_pragma=synchronous(" + syncMode + ")",
		"_pragma=busy_timeout(20000)",
		// A negative cache_size is in KiB.
		fmt.Sprintf("_pragma=cache_size(%d)", -s.cacheSize/1024),
	}
	if write {
		q = append(q, "_txlock=immediate")
	}
	return "file:" + path + "?" + strings.Join(q, "&")
}

func openSQLite(dir string, s storeSettings) (store, error) {
	path := filepath.Join(dir, "entities.sqlite")
	w, err := sql.Open("sqlite", sqliteDSN(path, s, true))
	if err != nil {
		return nil, err
	}
	w.SetMaxOpenConns(1)
	if _, err := w.Exec(sqliteTable); err != nil {
		w.Close()
		return nil, err
	}
	r, err := sql.Open("sqlite", sqliteDSN(path, s, false))
	if err != nil {
		w.Close()
		return nil, err
	}
	r.SetMaxOpenConns(8)
	r.SetMaxIdleConns(8)
	st := &sqliteStore{w: w, r: r}
	const cols = `PartitionKey, RowKey, Version, Props`
	prep := []struct {
		db   *sql.DB
		dst  **sql.Stmt
		text string
	}{
		{w, &st.upsert, `INSERT INTO entities (` + cols + `) VALUES (?, ?, 1, ?)
			ON CONFLICT (PartitionKey, RowKey) DO UPDATE SET Version = Version + 1, Props = excluded.Props`},
		{w, &st.ins, `INSERT INTO entities (` + cols + `) VALUES (?, ?, 1, ?)`},
		{w, &st.update, `UPDATE entities SET Version = Version + 1, Props = ?
			WHERE PartitionKey = ? AND RowKey = ? AND Version = ?`},
		{r, &st.getOne, `SELECT Version, Props FROM entities WHERE PartitionKey = ? AND RowKey = ?`},
		{r, &st.rng, `SELECT ` + cols + ` FROM entities
			WHERE PartitionKey = ? AND RowKey >= ? AND RowKey < ? ORDER BY RowKey`},
		{r, &st.part, `SELECT ` + cols + ` FROM entities WHERE PartitionKey = ? ORDER BY RowKey`},
		{r, &st.filter, `SELECT ` + cols + ` FROM entities WHERE raw_int32(Props, 'Bucket') = ?
			ORDER BY PartitionKey, RowKey`},
		{r, &st.pageFirst, `SELECT ` + cols + ` FROM entities ORDER BY PartitionKey, RowKey LIMIT ?`},
		{r, &st.pageNext, `SELECT ` + cols + ` FROM entities WHERE (PartitionKey, RowKey) >= (?, ?)
			ORDER BY PartitionKey, RowKey LIMIT ?`},
	}
	for _, p := range prep {
		if *p.dst, err = p.db.Prepare(p.text); err != nil {
			st.close()
			return nil, fmt.Errorf("bench: sqlite prepare: %w", err)
		}
	}
	return st, nil
}

func (s *sqliteStore) close() error {
	for _, st := range []*sql.Stmt{s.upsert, s.ins, s.update, s.getOne, s.rng, s.part, s.filter, s.pageFirst, s.pageNext} {
		if st != nil {
			st.Close()
		}
	}
	err := s.r.Close()
	if werr := s.w.Close(); err == nil {
		err = werr
	}
	return err
}

func (s *sqliteStore) upsertBatch(ctx context.Context, recs []record) error {
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	st := tx.StmtContext(ctx, s.upsert)
	var v []byte
	ts := nowTicks()
	for i := range recs {
		v = encodeRaw(v[:0], &recs[i], ts)
		if _, err := st.ExecContext(ctx, recs[i].PK, recs[i].RK, v); err != nil {
			tx.Rollback()
			return err
		}
	}
	return tx.Commit()
}

func (s *sqliteStore) insert(ctx context.Context, rec *record) error {
	_, err := s.ins.ExecContext(ctx, rec.PK, rec.RK, encodeRaw(nil, rec, nowTicks()))
	return err
}

func (s *sqliteStore) get(ctx context.Context, pk, rk string) (int, error) {
	var version int64
	var props []byte
	err := s.getOne.QueryRowContext(ctx, pk, rk).Scan(&version, &props)
	if err == sql.ErrNoRows {
		return 0, errNotFound
	}
	if err != nil {
		return 0, err
	}
	rec := record{PK: pk, RK: rk}
	_, n, err := decodeRaw(props, &rec)
	return n, err
}

// collect decodes every row of rows (PartitionKey, RowKey, Version,
// Props) and returns the records and the number of rows.
func collect(rows *sql.Rows, limit int) ([]record, error) {
	var out []record
	var props []byte
	var version int64
	for rows.Next() {
		if limit >= 0 && len(out) == limit {
			break
		}
		out = append(out, record{})
		rec := &out[len(out)-1]
		if err := rows.Scan(&rec.PK, &rec.RK, &version, &props); err != nil {
			rows.Close()
			return nil, err
		}
		if _, _, err := decodeRaw(props, rec); err != nil {
			rows.Close()
			return nil, err
		}
	}
	if err := rows.Err(); err != nil {
		rows.Close()
		return nil, err
	}
	return out, rows.Close()
}

func (s *sqliteStore) rangeQuery(ctx context.Context, pk, lo, hi string) (int, error) {
	rows, err := s.rng.QueryContext(ctx, pk, lo, hi)
	if err != nil {
		return 0, err
	}
	recs, err := collect(rows, -1)
	return len(recs), err
}

func (s *sqliteStore) partitionScan(ctx context.Context, pk string) (int, error) {
	rows, err := s.part.QueryContext(ctx, pk)
	if err != nil {
		return 0, err
	}
	recs, err := collect(rows, -1)
	return len(recs), err
}

func (s *sqliteStore) filterScan(ctx context.Context, bucket int32) (int, error) {
	rows, err := s.filter.QueryContext(ctx, bucket)
	if err != nil {
		return 0, err
	}
	recs, err := collect(rows, -1)
	return len(recs), err
}

// The SQLite page token is the key of the first row of the next page,
// PartitionKey and RowKey joined by 0x00 (which keys never contain).
func (s *sqliteStore) page(ctx context.Context, token string, top int) (int, string, error) {
	var rows *sql.Rows
	var err error
	if token == "" {
		rows, err = s.pageFirst.QueryContext(ctx, top+1)
	} else {
		pk, rk, ok := strings.Cut(token, "\x00")
		if !ok {
			return 0, "", fmt.Errorf("bench: bad sqlite token %q", token)
		}
		rows, err = s.pageNext.QueryContext(ctx, pk, rk, top+1)
	}
	if err != nil {
		return 0, "", err
	}
	recs, err := collect(rows, -1)
	if err != nil {
		return 0, "", err
	}
	if len(recs) <= top {
		return len(recs), "", nil
	}
	last := recs[top]
	return top, last.PK + "\x00" + last.RK, nil
}

func (s *sqliteStore) readModifyWrite(ctx context.Context, pk, rk string) error {
	var version int64
	var props []byte
	if err := s.getOne.QueryRowContext(ctx, pk, rk).Scan(&version, &props); err != nil {
		return err
	}
	var rec record
	ts, _, err := decodeRaw(props, &rec)
	if err != nil {
		return err
	}
	rec.PK, rec.RK = pk, rk
	rec.Count++
	res, err := s.update.ExecContext(ctx, encodeRaw(nil, &rec, max(nowTicks(), ts+1)), pk, rk, version)
	if err != nil {
		return err
	}
	n, err := res.RowsAffected()
	if err != nil {
		return err
	}
	if n == 0 {
		return errConflict
	}
	return nil
}

func (s *sqliteStore) readCount(ctx context.Context, pk, rk string) (int32, error) {
	var version int64
	var props []byte
	if err := s.getOne.QueryRowContext(ctx, pk, rk).Scan(&version, &props); err != nil {
		return 0, err
	}
	c, ok, err := rawInt32Property(props, "Count")
	if err == nil && !ok {
		err = errRawCorrupt
	}
	return c, err
}
