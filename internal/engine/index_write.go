package engine

import (
	"bytes"
	"fmt"
	"hash/maphash"
	"io"
	"slices"
	"strings"
	"sync"

	"github.com/cockroachdb/pebble/v2"
	"github.com/tablestore/tablestore/driver"
	"github.com/tablestore/tablestore/edm"
	"github.com/tablestore/tablestore/internal/keys"
)

// recordTuple appends to dst the value tuple of ix for a stored record,
// and reports whether every property is present (only such tuples are
// subject to uniqueness).
func recordTuple(dst []byte, ix *index, rec driver.Record) ([]byte, bool) {
	complete := true
	for _, name := range ix.spec.Properties {
		v, ok := rec.Lookup(name)
		if !ok {
			dst = keys.AppendAbsent(dst)
			complete = false
			continue
		}
		dst = keys.AppendValue(dst, v)
	}
	return dst, complete
}

// propsTuple is recordTuple for properties sorted by name.
func propsTuple(dst []byte, ix *index, props []driver.Property) ([]byte, bool) {
	complete := true
	for _, name := range ix.spec.Properties {
		i, ok := slices.BinarySearchFunc(props, name, func(p driver.Property, n string) int { return strings.Compare(p.Name, n) })
		if !ok {
			dst = keys.AppendAbsent(dst)
			complete = false
			continue
		}
		dst = keys.AppendValue(dst, props[i].Value)
	}
	return dst, complete
}

// entryKey returns the key of ix's entry for the entity (pk, rk) with
// value tuple tuple.
func (ix *index) entryKey(tuple []byte, pk, rk string) []byte {
	k := make([]byte, 0, keys.IndexEntryLen(len(tuple), pk, rk))
	return keys.AppendIndexEntry(k, ix.tableID, ix.id, ix.spec.Partitioned, tuple, pk, rk)
}

// tuplePrefix returns the key prefix of ix's entries with value tuple
// tuple (in partition pk for a Partitioned index).
func (ix *index) tuplePrefix(tuple []byte, pk string) []byte {
	k := keys.IndexPrefix(nil, ix.tableID, ix.id)
	if ix.spec.Partitioned {
		k = append(append(k, pk...), keys.Sep)
	}
	return append(k, tuple...)
}

// lockedTuples reports whether ix checks uniqueness under tuple locks: a
// Unique table-wide index. A Partitioned Unique index is unique within
// each partition, which the partition's lock serializes.
func (ix *index) lockedTuples() bool { return ix.spec.Unique && !ix.spec.Partitioned }

// stripe returns the tuple lock stripe of tuple in ix.
func (l *tupleLocks) stripe(ix *index, tuple []byte) int {
	var h maphash.Hash
	h.SetSeed(l.seed)
	var id [12]byte
	for i := range 8 {
		id[i] = byte(ix.tableID >> (8 * i))
	}
	for i := range 4 {
		id[8+i] = byte(ix.id >> (8 * i))
	}
	_, _ = h.Write(id[:])
	_, _ = h.Write(tuple)
	return int(h.Sum64() % tupleLockStripes)
}

// lockStripes locks the given stripes in ascending order (so two lockers
// never wait for each other in a cycle) and returns them for unlocking.
func (l *tupleLocks) lockStripes(stripes []int) []*sync.Mutex {
	slices.Sort(stripes)
	stripes = slices.Compact(stripes)
	out := make([]*sync.Mutex, len(stripes))
	for i, s := range stripes {
		out[i] = &l.stripes[s]
		out[i].Lock()
	}
	return out
}

// entryOp is one write of an index entry.
type entryOp struct {
	key []byte
	set bool // else delete
}

// indexWrite is what one commit writes to its table's indexes, and the
// tuple locks it holds until the commit is done.
type indexWrite struct {
	p   partition
	ixs []*index
	// cleanups delete entries left by range deletions that uniqueness
	// checks met; they go to the batch before ops.
	cleanups []entryOp
	ops      []entryOp
	locked   []*sync.Mutex
	// ttl and now are the table's expiry settings (nil: none) and the
	// commit's expiry time: an expired entity holds no unique value.
	ttl *ttlSettings
	now int64
}

// unlock releases the tuple locks.
func (w *indexWrite) unlock() {
	for _, m := range w.locked {
		m.Unlock()
	}
	w.locked = nil
}

// size is the bytes the writes add to a batch, at most.
func (w *indexWrite) size() int {
	n := 0
	for _, op := range w.cleanups {
		n += batchRecordOverhead + len(op.key)
	}
	for _, op := range w.ops {
		n += batchRecordOverhead + len(op.key)
	}
	return n
}

// apply adds the writes to b.
func (w *indexWrite) apply(b *pebble.Batch) {
	for _, ops := range [2][]entryOp{w.cleanups, w.ops} {
		for _, op := range ops {
			if op.set {
				_ = b.Set(op.key, nil, nil)
			} else {
				_ = b.Delete(op.key, nil)
			}
		}
	}
}

// prepareIndexWrites computes, for actions whose preconditions hold (in
// order; reads holds the stored entities, value each action's new
// properties), the index entries to delete and to set, and checks every
// Unique index in action order: an action whose new tuple another entity
// holds, in the store or after an earlier action of the transaction,
// fails with EntityAlreadyExists (its Index set). It locks the tuples of
// Unique table-wide indexes that the actions remove or add; the caller
// must call unlock on the result (also on error) once the batch is
// committed or abandoned.
// REQUIRES: the partition lock and db.catMu (read mode) are held.
func (p partition) prepareIndexWrites(ixs []*index, actions []driver.Action, reads []storedEntity,
	value func(int) ([]byte, []driver.Property), ttl *ttlSettings, now int64) (*indexWrite, error) {
	w := &indexWrite{p: p, ixs: ixs, ttl: ttl, now: now}
	n := len(actions) * len(ixs)
	oldT := make([][]byte, n)
	newT := make([][]byte, n)
	complete := make([]bool, n) // of newT
	var stripes []int
	for i := range actions {
		a := &actions[i]
		var st storedEntity
		if reads != nil {
			st = reads[i]
		}
		if st.err != nil {
			return w, p.db.storageErr(fmt.Sprintf("read of (%q, %q) in table #%d for a commit", p.pk, a.RowKey, p.tableID), st.err)
		}
		for k, ix := range ixs {
			j := i*len(ixs) + k
			var oldComplete bool
			if st.found {
				oldT[j], oldComplete = recordTuple(nil, ix, driver.Record(st.val))
			}
			if a.Type != driver.ActionDelete {
				if rec, props := value(i); rec != nil {
					newT[j], complete[j] = recordTuple(nil, ix, driver.Record(rec))
				} else {
					newT[j], complete[j] = propsTuple(nil, ix, props)
				}
			}
			if !ix.lockedTuples() || sameTuple(oldT[j], newT[j]) {
				continue
			}
			if oldT[j] != nil && oldComplete {
				stripes = append(stripes, p.db.ix.tuples.stripe(ix, oldT[j]))
			}
			if newT[j] != nil && complete[j] {
				stripes = append(stripes, p.db.ix.tuples.stripe(ix, newT[j]))
			}
		}
	}
	if len(stripes) > 0 {
		w.locked = p.db.ix.tuples.lockStripes(stripes)
	}
	// Uniqueness, action by action (then index by index, in creation
	// order), over the transaction's state so far.
	var overlay []map[string][]byte // by index: RowKey -> tuple after the last action on it
	for k, ix := range ixs {
		if ix.spec.Unique {
			if overlay == nil {
				overlay = make([]map[string][]byte, len(ixs))
			}
			overlay[k] = map[string][]byte{}
		}
	}
	for i := range actions {
		if overlay == nil {
			break
		}
		rk := actions[i].RowKey
		for k, ix := range ixs {
			if !ix.spec.Unique {
				continue
			}
			j := i*len(ixs) + k
			if newT[j] != nil && complete[j] && !sameTuple(oldT[j], newT[j]) {
				if err := w.checkUnique(ix, rk, newT[j], overlay[k]); err != nil {
					if de, ok := err.(*driver.Error); ok {
						de.Index = i
					}
					return w, err
				}
			}
		}
		for k, ix := range ixs {
			if ix.spec.Unique {
				overlay[k][rk] = newT[i*len(ixs)+k]
			}
		}
	}
	for i := range actions {
		rk := actions[i].RowKey
		for k, ix := range ixs {
			j := i*len(ixs) + k
			if sameTuple(oldT[j], newT[j]) {
				continue
			}
			if oldT[j] != nil {
				w.ops = append(w.ops, entryOp{key: ix.entryKey(oldT[j], p.pk, rk)})
			}
			if newT[j] != nil {
				w.ops = append(w.ops, entryOp{key: ix.entryKey(newT[j], p.pk, rk), set: true})
			}
		}
	}
	return w, nil
}

// sameTuple reports whether two tuples (nil: no entry) are the same.
func sameTuple(a, b []byte) bool {
	return (a == nil) == (b == nil) && bytes.Equal(a, b)
}

// checkUnique fails with EntityAlreadyExists when an entity other than
// (w.p.pk, rk) holds tuple in ix: one of the transaction's rows after its
// last action (overlay), or a stored entity, checked against its entry
// (rows of the transaction count by overlay when it has them). Entries
// whose entity no longer holds the tuple (left by a range deletion) are
// deleted with the commit.
// REQUIRES: the tuple's lock (table-wide) or the partition's lock
// (Partitioned) is held.
func (w *indexWrite) checkUnique(ix *index, rk string, tuple []byte, overlay map[string][]byte) error {
	pk := w.p.pk
	for r, t := range overlay {
		if r != rk && t != nil && bytes.Equal(t, tuple) {
			return uniqueErr(ix, tuple, pk, r)
		}
	}
	lo := ix.tuplePrefix(tuple, pk)
	it, err := w.p.db.pdb.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: keys.ValueEnd(lo)})
	if err != nil {
		return w.p.db.storageErr("read index "+ix.spec.Name, err)
	}
	defer it.Close()
	for valid := it.First(); valid; valid = it.Next() {
		_, epk, erk, err := keys.SplitIndexSuffix(it.Key()[keys.IndexPrefixLen:], len(ix.spec.Properties), ix.spec.Partitioned)
		if err != nil {
			return &driver.CorruptError{Op: fmt.Sprintf("read of index %s entry %q", ix.spec.Name, it.Key()), Err: err}
		}
		if string(epk) == pk {
			if string(erk) == rk {
				continue
			}
			if _, ok := overlay[string(erk)]; ok {
				continue
			}
		}
		holds, err := w.p.db.entityHolds(nil, ix, epk, erk, tuple)
		if err != nil {
			return err
		}
		if holds && w.ttl != nil {
			// An expired entity not yet swept is absent: its entry stays
			// for the sweeper to remove with it.
			expired, err := w.p.db.entityExpired(epk, erk, ix.tableID, w.ttl, w.now)
			if err != nil {
				return err
			}
			if expired {
				continue
			}
		}
		if holds {
			return uniqueErr(ix, tuple, string(epk), string(erk))
		}
		w.cleanups = append(w.cleanups, entryOp{key: bytes.Clone(it.Key())})
	}
	if err := it.Error(); err != nil {
		return w.p.db.storageErr("read index "+ix.spec.Name, err)
	}
	return nil
}

func uniqueErr(ix *index, tuple []byte, pk, rk string) error {
	return errorf(edm.CodeEntityAlreadyExists, "unique index %q already holds (%s) for entity (%q, %q)",
		ix.spec.Name, keys.FormatTuple(tuple, ix.spec.Properties), pk, rk)
}

// getter is a point read: the store's, or a snapshot's.
type getter interface {
	Get(key []byte) ([]byte, io.Closer, error)
}

// entityHolds reports whether the entity (pk, rk) exists in r (the store
// when nil) and has value tuple tuple in ix: whether an entry of ix for
// it is current.
func (db *Engine) entityHolds(r getter, ix *index, pk, rk, tuple []byte) (bool, error) {
	key := keys.Entity(nil, ix.tableID, string(pk), string(rk))
	var val []byte
	var closer io.Closer
	var err error
	if r == nil {
		val, closer, err = db.pdb.Get(key)
	} else {
		val, closer, err = r.Get(key)
	}
	if err == pebble.ErrNotFound {
		return false, nil
	}
	if err != nil {
		return false, db.storageErr(fmt.Sprintf("read of (%q, %q) for index %s", pk, rk, ix.spec.Name), err)
	}
	defer closer.Close()
	t, _ := recordTuple(make([]byte, 0, len(tuple)), ix, driver.Record(val))
	return bytes.Equal(t, tuple), nil
}

// entityExpired reports whether the stored entity (pk, rk) of table
// tableID has expired at now under s.
func (db *Engine) entityExpired(pk, rk []byte, tableID uint64, s *ttlSettings, now int64) (bool, error) {
	val, closer, err := db.pdb.Get(keys.Entity(nil, tableID, string(pk), string(rk)))
	if err == pebble.ErrNotFound {
		return false, nil
	}
	if err != nil {
		return false, db.storageErr(fmt.Sprintf("read of (%q, %q) for its expiry", pk, rk), err)
	}
	defer closer.Close()
	return s.expired(val, now), nil
}
