package engine

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/tablestore/tablestore/driver"
	"github.com/tablestore/tablestore/edm"
	"github.com/tablestore/tablestore/internal/keys"
)

// RestoreTable writes into directory into (missing or empty) a new
// store holding one table of the store as it was at instant to (zero:
// the newest the backup holds): table name, named as there ("" keeps
// the name). The whole store is restored first, beside into, and
// removed afterwards; the table's stored records are then copied byte
// for byte under the new store's table ID, so every entity keeps its
// Timestamp and ETag. Entities expired at to under the table's TTL are
// left out; the table's settings (TTL, change feed, indexes, access
// policies) are not copied. The result is checked before RestoreTable
// returns; Entities counts the table's entities.
//
// Errors: those of Restore, and TableNotFound for a table that did not
// exist at to.
func RestoreTable(ctx context.Context, from string, to time.Time, name, as, into string, opts Options) (_ RestoreResult, err error) {
	if err := emptyTarget(into); err != nil {
		return RestoreResult{}, err
	}
	if as == "" {
		as = name
	}
	parent := filepath.Dir(filepath.Clean(into))
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return RestoreResult{}, fmt.Errorf("tablestore: restore: %w", err)
	}
	whole, err := os.MkdirTemp(parent, "."+filepath.Base(into)+".restoring-")
	if err != nil {
		return RestoreResult{}, fmt.Errorf("tablestore: restore: %w", err)
	}
	defer os.RemoveAll(whole)
	res, err := Restore(ctx, from, to, whole, opts)
	if err != nil {
		return res, err
	}
	defer leaveAsFound(into, &err)()
	opts.Backup = nil
	srcOpts := opts
	srcOpts.MustExist = true
	src, err := Open(whole, srcOpts)
	if err != nil {
		return res, fmt.Errorf("tablestore: restore: open the restored store: %w", err)
	}
	defer func() { err = errors.Join(err, src.Close()) }()
	info, err := src.lookupTable(name)
	if err != nil {
		return res, err
	}
	opts.MustExist = false
	dst, err := Open(into, opts)
	if err != nil {
		return res, fmt.Errorf("tablestore: restore: open the new store: %w", err)
	}
	n, err := copyTableRecords(ctx, src, dst, info.id, as, edm.TicksFromTime(res.Time))
	if err == nil {
		var rep driver.CheckReport
		rep, err = dst.Check(ctx)
		if err == nil && len(rep.Damaged) > 0 {
			d := rep.Damaged[0]
			err = fmt.Errorf("tablestore: restore: the result fails its check: %s %s: %w", d.Kind, d.Path, d.Err)
		}
		if err == nil && rep.Entities != n {
			err = fmt.Errorf("tablestore: restore: the result's check counted %d entities of the %d copied", rep.Entities, n)
		}
	}
	err = errors.Join(err, dst.Close())
	if err != nil {
		return res, err
	}
	res.Entities = n
	return res, nil
}

// copyTableRecords creates table as in dst and copies into it, byte for
// byte, the stored records of table srcID of src, but those expired at
// now (ticks) under src's TTL for the table; it returns how many. The
// copy is applied in groups without syncs, then flushed.
func copyTableRecords(ctx context.Context, src, dst *Engine, srcID uint64, as string, now int64) (int, error) {
	if err := dst.CreateTable(ctx, as); err != nil {
		return 0, err
	}
	dinfo, err := dst.lookupTable(as)
	if err != nil {
		return 0, err
	}
	ttl := src.ttlFor(srcID)
	lower, upper := keys.EntitySpan(srcID)
	it, err := src.pdb.NewIter(&pebble.IterOptions{LowerBound: lower, UpperBound: upper})
	if err != nil {
		return 0, src.storageErr("restore: read the table", err)
	}
	defer it.Close()
	n := 0
	b := dst.pdb.NewBatch()
	defer func() { _ = b.Close() }()
	apply := func() error {
		if b.Empty() {
			return nil
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		err := dst.pdb.Apply(b, pebble.NoSync)
		_ = b.Close()
		b = dst.pdb.NewBatch()
		return err
	}
	var key []byte
	for it.First(); it.Valid(); it.Next() {
		v, err := it.ValueAndErr()
		if err != nil {
			return n, src.storageErr("restore: read the table", err)
		}
		if ttl != nil && ttl.expired(v, now) {
			continue
		}
		key = append(keys.TablePrefix(key[:0], dinfo.id), it.Key()[8:]...)
		if err := b.Set(key, v, nil); err != nil {
			return n, err
		}
		n++
		if b.Len() >= restoreGroupBytes {
			if err := apply(); err != nil {
				return n, dst.storageErr("restore: write the table", err)
			}
		}
	}
	if err := it.Error(); err != nil {
		return n, src.storageErr("restore: read the table", err)
	}
	if err := apply(); err != nil {
		return n, dst.storageErr("restore: write the table", err)
	}
	if err := dst.pdb.Flush(); err != nil {
		return n, dst.storageErr("restore: flush the table", err)
	}
	return n, nil
}
