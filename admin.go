package tablestore

import (
	"context"

	"github.com/tablestore/tablestore/driver"
)

// Checkpoint writes a consistent copy of the whole store into directory
// dir, which must not exist yet, while the store stays open: reads and
// writes go on during the call. The copy holds every commit acknowledged
// before Checkpoint started, each transaction entirely or not at all, as
// of one instant; Open(dir, nil) opens it as a store of its own. On the
// embedded engine the copy hard-links the immutable data files, so it
// takes little time and space on the same filesystem.
//
// Errors: NotImplemented when the store's driver cannot checkpoint (a
// remote store), ErrClosed, ctx's error, and I/O errors (such as dir
// existing already).
func (db *DB) Checkpoint(ctx context.Context, dir string) error {
	if err := db.checkContext(ctx); err != nil {
		return err
	}
	cp, ok := db.conn.(driver.Checkpointer)
	if !ok {
		return newError(CodeNotImplemented, "this store's driver cannot write a checkpoint")
	}
	return mapError(cp.Checkpoint(ctx, dir), false)
}

// TableStats are estimates of a table's size read from the store's
// metadata, without reading the table. See Table.Stats.
type TableStats struct {
	// Entities estimates the stored entities. Overwritten or deleted
	// entities whose old versions are not yet compacted away may be
	// counted, so it can be high after many updates or deletes; a small
	// table stored in files shared with others is estimated to a few
	// kilobytes' worth of entities.
	Entities int64
	// Bytes estimates the disk space the table's data takes.
	Bytes int64
	// Unflushed is true when the newest writes, still held in memory, may
	// be missing from both estimates.
	Unflushed bool
}

// Stats estimates the table's size without reading its entities: on the
// embedded engine, from the metadata of the data files that hold the
// table's key range, so it takes the same short time whatever the
// table's size. For an exact count, run a query.
//
// Errors: TableNotFound, NotImplemented when the store's driver cannot
// estimate (a remote store), ErrClosed, ctx's error.
func (t *Table) Stats(ctx context.Context) (*TableStats, error) {
	if err := t.db.checkContext(ctx); err != nil {
		return nil, err
	}
	sr, ok := t.db.conn.(driver.StatsReader)
	if !ok {
		return nil, newError(CodeNotImplemented, "this store's driver cannot estimate table sizes")
	}
	st, err := sr.TableStats(ctx, t.name)
	if err != nil {
		return nil, mapError(err, false)
	}
	return &TableStats{Entities: st.Entities, Bytes: st.Bytes, Unflushed: st.Unflushed}, nil
}
