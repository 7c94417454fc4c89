package tablestore

import (
	"context"

	"github.com/tablestore/tablestore/driver"
	"github.com/tablestore/tablestore/internal/engine"
)

// CheckReport is what a check found: the damaged files (empty when none)
// and how many files and entities it read.
type CheckReport = driver.CheckReport

// DamagedFile is one damaged file of a CheckReport, with the tables it
// holds data of.
type DamagedFile = driver.DamagedFile

// Health returns nil while the store accepts writes, else the first fault
// it met (an *Error matching ErrCorrupt for damaged data, found by any
// read, write, check or background compaction); from then on every write
// fails, while reads go on and fail only where they meet damage. It does
// no I/O and may be called at any time, even after Close. Options'
// OnCorruption is called once with the same error. A driver that reports
// no health is always healthy.
func (db *DB) Health() error {
	h, ok := db.conn.(driver.HealthReporter)
	if !ok {
		return nil
	}
	return mapError(h.Health(), false)
}

// Check reads every stored block, verifying its checksum, and every
// entity, and reports each damaged file with the tables it holds. It
// changes nothing and the store stays usable meanwhile; damage found
// also sets Health. Errors: ErrClosed, ctx's error, NotImplemented for a
// driver that cannot check; damage is in the report, not an error.
func (db *DB) Check(ctx context.Context) (*CheckReport, error) {
	if err := db.checkContext(ctx); err != nil {
		return nil, err
	}
	c, ok := db.conn.(driver.Checker)
	if !ok {
		return nil, newError(CodeNotImplemented, "the driver cannot check its data")
	}
	rep, err := c.Check(ctx)
	if err != nil {
		return nil, mapError(err, false)
	}
	return &rep, nil
}

// CheckDir checks the closed store in directory dir without writing to
// it, as Check does, even when the damage keeps Open from opening it (it
// then verifies each file alone and cannot tell which tables a file
// holds). Errors: InvalidInput for an option outside its bounds (see
// Options), ErrNotStore, and I/O and lock errors (a store open elsewhere
// is locked).
func CheckDir(ctx context.Context, dir string, opts *Options) (*CheckReport, error) {
	o := opts.withDefaults()
	if err := o.validate(); err != nil {
		return nil, err
	}
	rep, err := engine.CheckDir(ctx, dir, o.engineOptions())
	if err != nil {
		return nil, mapError(err, false)
	}
	return &rep, nil
}
