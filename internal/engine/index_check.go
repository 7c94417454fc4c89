package engine

import (
	"errors"
	"fmt"
	"github.com/tablestore/tablestore/driver"
	"slices"

	"github.com/cockroachdb/pebble/v2"
	"github.com/tablestore/tablestore/internal/keys"
)

// maxIndexFindings bounds the findings a check lists per index.
const maxIndexFindings = 10

// checkIndexes compares every ready index of the table with its entities,
// in one snapshot taken together with the list of indexes: each entity
// must have its entry (else the entry is missing), and each entry must
// name an entity that holds its tuple, unless a pending range deletion
// covers it (else it is extra or stale). Findings are damage of kind
// "index". Indexes still building are skipped.
func (c *checker) checkIndexes(id uint64, name string) error {
	db := c.db
	db.catMu.RLock()
	var ixs []*index
	for _, ix := range db.tableIndexes(id) {
		if ix.ready {
			ixs = append(ixs, ix)
		}
	}
	var snap *pebble.Snapshot
	if len(ixs) > 0 {
		snap = db.pdb.NewSnapshot()
	}
	db.catMu.RUnlock()
	if snap == nil {
		return nil
	}
	defer snap.Close()
	pending, err := readPending(snap, id)
	if err != nil {
		c.addRead(err)
		return nil
	}
	for _, ix := range ixs {
		findings, err := c.checkIndex(snap, ix, pending)
		if err != nil {
			if pebble.IsCorruptionError(err) {
				c.addRead(err)
				return nil
			}
			return err
		}
		if len(findings) > 0 {
			c.add("", "index", []string{name}, fmt.Errorf("index %s: %w", ix.spec.Name, errors.Join(findings...)))
		}
	}
	return nil
}

// checkIndex returns what is wrong with one index in snap.
func (c *checker) checkIndex(snap *pebble.Snapshot, ix *index, pending []pendingRange) ([]error, error) {
	var findings []error
	more := 0
	note := func(err error) {
		if len(findings) < maxIndexFindings {
			findings = append(findings, err)
		} else {
			more++
		}
	}
	// Every entity has its entry.
	lo, hi := keys.EntitySpan(ix.tableID)
	it, err := snap.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: hi})
	if err != nil {
		return nil, err
	}
	var tuple []byte
	n := 0
	for valid := it.First(); valid; valid = it.Next() {
		if n++; n%4096 == 0 {
			if err := c.ctx.Err(); err != nil {
				_ = it.Close()
				return nil, err
			}
		}
		_, pk, rk, err := keys.Split(it.Key())
		if err != nil {
			continue // reported by the table's scan
		}
		val, err := it.ValueAndErr()
		if err != nil {
			_ = it.Close()
			return nil, err
		}
		tuple, _ = recordTuple(tuple[:0], ix, driver.Record(val))
		v, closer, err := snap.Get(ix.entryKey(tuple, string(pk), string(rk)))
		switch {
		case errors.Is(err, pebble.ErrNotFound):
			note(fmt.Errorf("missing entry for entity (%q, %q) holding (%s)", pk, rk, keys.FormatTuple(tuple, ix.spec.Properties)))
		case err != nil:
			_ = it.Close()
			return nil, err
		default:
			if len(v) != 0 {
				note(fmt.Errorf("entry of entity (%q, %q) has a value", pk, rk))
			}
			_ = closer.Close()
		}
	}
	if err := errors.Join(it.Error(), it.Close()); err != nil {
		return nil, err
	}
	// Every entry is its entity's, or pending.
	lo, hi = keys.IndexSpan(ix.tableID, ix.id)
	it, err = snap.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: hi})
	if err != nil {
		return nil, err
	}
	defer it.Close()
	for valid := it.First(); valid; valid = it.Next() {
		if n++; n%4096 == 0 {
			if err := c.ctx.Err(); err != nil {
				return nil, err
			}
		}
		t, pk, rk, err := keys.SplitIndexSuffix(it.Key()[keys.IndexPrefixLen:], len(ix.spec.Properties), ix.spec.Partitioned)
		if err != nil {
			note(fmt.Errorf("malformed entry %q", it.Key()))
			continue
		}
		holds, err := c.db.entityHolds(snap, ix, pk, rk, t)
		if err != nil {
			return nil, err
		}
		if holds || slices.ContainsFunc(pending, func(r pendingRange) bool { return r.covers(pk, rk) }) {
			continue
		}
		note(fmt.Errorf("stale entry (%s) for entity (%q, %q)", keys.FormatTuple(t, ix.spec.Properties), pk, rk))
	}
	if err := it.Error(); err != nil {
		return nil, err
	}
	if more > 0 {
		findings = append(findings, fmt.Errorf("and %d more", more))
	}
	return findings, nil
}
