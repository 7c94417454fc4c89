package tablestore

import "github.com/tablestore/tablestore/internal/engine"

// flush flushes the embedded engine's memtable, so tests and benchmarks
// can read from sstables.
func flush(db *DB) error { return db.conn.(*engine.Engine).Flush() }
