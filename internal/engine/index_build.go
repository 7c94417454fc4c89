package engine

import (
	"bytes"
	"context"
	"fmt"
	"slices"

	"github.com/cockroachdb/pebble/v2"
	"github.com/tablestore/tablestore/driver"
	"github.com/tablestore/tablestore/edm"
	"github.com/tablestore/tablestore/internal/keys"
)

// buildChunk is the most entities one step of a build indexes under its
// locks (a variable so tests can shrink it).
var buildChunk = 1024

// buildRefresh is how many steps a build reads with one discovery
// iterator before it opens a newer one, so the build does not hold old
// files from compaction for its whole duration.
const buildRefresh = 256

// buildHook, when set (by tests), is called before each step of a build.
var buildHook func(done int64)

// How an online build stays exact.
//
// The index is declared (and published to writers) before the build
// reads anything: from then on every commit keeps it exact. A discovery
// iterator, opened after the declaration, walks the table's entities in
// key order and cuts them into steps of buildChunk entities. A step locks
// the partitions of its entities (their stripes, in ascending order, so
// two builds never wait for each other in a cycle; writers take one
// partition lock and never wait for another), opens a fresh iterator over
// the step's key range, and writes in one batch the entry of every entity
// of a locked partition it finds there: under the locks, each entity is
// as the last commit left it, and that commit, if after the declaration,
// wrote the same entry. An entity of another partition in the range was
// written after the discovery iterator was opened, so after the
// declaration, and is indexed already. A Unique index also locks the
// step's tuples and checks each against the index and the step.
//
// The steps' batches are not synced; marking the index ready is, which
// makes them durable. The discovery iterator counts the entities first,
// for the progress (Total).

// buildIndex fills ix from its table's entities.
func (db *Engine) buildIndex(ctx context.Context, ix *index) error {
	lo, hi := keys.EntitySpan(ix.tableID)
	opts := &pebble.IterOptions{LowerBound: lo, UpperBound: hi}
	disc, err := db.pdb.NewIter(opts)
	if err != nil {
		return db.storageErr("build index "+ix.spec.Name, err)
	}
	defer func() { _ = disc.Close() }()
	var total int64
	for valid := disc.First(); valid; valid = disc.Next() {
		if total++; total%4096 == 0 {
			if err := db.buildContinues(ctx); err != nil {
				return err
			}
		}
	}
	if err := disc.Error(); err != nil {
		return db.storageErr("build index "+ix.spec.Name, err)
	}
	ix.total.Store(total)
	cursor := lo
	valid := disc.First()
	for steps := 1; valid; steps++ {
		if err := db.buildContinues(ctx); err != nil {
			return err
		}
		if buildHook != nil {
			buildHook(ix.done.Load())
		}
		var pks []string
		var last []byte
		for n := 0; valid && n < buildChunk; n++ {
			_, pk, _, err := keys.Split(disc.Key())
			if err != nil {
				return corruptRecord(disc.Key(), err)
			}
			if len(pks) == 0 || pks[len(pks)-1] != string(pk) {
				pks = append(pks, string(pk))
			}
			last = append(last[:0], disc.Key()...)
			valid = disc.Next()
		}
		if err := disc.Error(); err != nil {
			return db.storageErr("build index "+ix.spec.Name, err)
		}
		end := keys.Successor(last)
		n, err := db.buildStep(ix, cursor, end, pks)
		if err != nil {
			return err
		}
		if d := ix.done.Add(n); d > ix.total.Load() {
			ix.total.Store(d)
		}
		cursor = end
		if valid && steps%buildRefresh == 0 {
			_ = disc.Close()
			if disc, err = db.pdb.NewIter(opts); err != nil {
				return db.storageErr("build index "+ix.spec.Name, err)
			}
			valid = disc.SeekGE(cursor)
		}
	}
	return db.storageErr("build index "+ix.spec.Name, disc.Error())
}

// buildContinues returns why a build must stop: ctx's error, ErrClosed
// once Close has begun, or the fault that stops writes.
func (db *Engine) buildContinues(ctx context.Context) error {
	if db.closed.Load() {
		return driver.ErrClosed
	}
	if err := db.writable(); err != nil {
		return err
	}
	return ctx.Err()
}

// buildStep indexes the entities of partitions pks (sorted) in the stored
// keys [lo, hi), as one step of a build, and returns how many it indexed.
func (db *Engine) buildStep(ix *index, lo, hi []byte, pks []string) (int64, error) {
	db.catMu.RLock()
	defer db.catMu.RUnlock()
	if err := db.stillLive(ix); err != nil {
		return 0, err
	}
	stripes := make([]int, len(pks))
	for i, pk := range pks {
		stripes[i] = db.locks.stripe(ix.tableID, pk)
	}
	slices.Sort(stripes)
	stripes = slices.Compact(stripes)
	for _, s := range stripes {
		db.locks.stripes[s].Lock()
	}
	defer func() {
		for _, s := range stripes {
			db.locks.stripes[s].Unlock()
		}
	}()
	it, err := db.pdb.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: hi})
	if err != nil {
		return 0, db.storageErr("build index "+ix.spec.Name, err)
	}
	defer it.Close()
	b := db.pdb.NewBatch()
	defer b.Close()
	type held struct {
		tuple  []byte
		pk, rk string
	}
	var uniq []held
	var n int64
	for valid := it.First(); valid; valid = it.Next() {
		_, pk, rk, err := keys.Split(it.Key())
		if err != nil {
			return 0, corruptRecord(it.Key(), err)
		}
		if _, ok := slices.BinarySearch(pks, string(pk)); !ok {
			continue // written after the declaration: indexed by its commit
		}
		val, err := it.ValueAndErr()
		if err != nil {
			return 0, db.storageErr("build index "+ix.spec.Name, err)
		}
		tuple, complete := recordTuple(nil, ix, val)
		_ = b.Set(ix.entryKey(tuple, string(pk), string(rk)), nil, nil)
		if ix.spec.Unique && complete {
			uniq = append(uniq, held{tuple, string(pk), string(rk)})
		}
		n++
	}
	if err := it.Error(); err != nil {
		return 0, db.storageErr("build index "+ix.spec.Name, err)
	}
	if len(uniq) > 0 {
		if ix.lockedTuples() {
			stripes := make([]int, len(uniq))
			for i, u := range uniq {
				stripes[i] = db.ix.tuples.stripe(ix, u.tuple)
			}
			locked := db.ix.tuples.lockStripes(stripes)
			defer func() {
				for _, m := range locked {
					m.Unlock()
				}
			}()
		}
		first := map[string]held{}
		for _, u := range uniq {
			scope := string(u.tuple)
			if ix.spec.Partitioned {
				scope = u.pk + "\x00" + scope
			}
			if o, ok := first[scope]; ok {
				return 0, buildUniqueErr(ix, u.tuple, o.pk, o.rk, u.pk, u.rk)
			}
			first[scope] = u
			if err := db.buildCheckUnique(ix, b, u.tuple, u.pk, u.rk); err != nil {
				return 0, err
			}
		}
	}
	if err := db.commitBatch(b, pebble.NoSync); err != nil {
		return 0, db.storageErr("build index "+ix.spec.Name, err)
	}
	return n, nil
}

// buildCheckUnique fails when an entity other than (pk, rk) holds tuple
// in ix, by the index's entries; entries no entity holds any more are
// deleted in b.
// REQUIRES: the tuple's lock (table-wide index) or the partition's.
func (db *Engine) buildCheckUnique(ix *index, b *pebble.Batch, tuple []byte, pk, rk string) error {
	lo := ix.tuplePrefix(tuple, pk)
	it, err := db.pdb.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: keys.ValueEnd(lo)})
	if err != nil {
		return db.storageErr("build index "+ix.spec.Name, err)
	}
	defer it.Close()
	for valid := it.First(); valid; valid = it.Next() {
		_, epk, erk, err := keys.SplitIndexSuffix(it.Key()[keys.IndexPrefixLen:], len(ix.spec.Properties), ix.spec.Partitioned)
		if err != nil {
			return &driver.CorruptError{Op: fmt.Sprintf("read of index %s entry %q", ix.spec.Name, it.Key()), Err: err}
		}
		if string(epk) == pk && string(erk) == rk {
			continue
		}
		holds, err := db.entityHolds(nil, ix, epk, erk, tuple)
		if err != nil {
			return err
		}
		if holds {
			return buildUniqueErr(ix, tuple, string(epk), string(erk), pk, rk)
		}
		_ = b.Delete(bytes.Clone(it.Key()), nil)
	}
	return db.storageErr("build index "+ix.spec.Name, it.Error())
}

func buildUniqueErr(ix *index, tuple []byte, pk1, rk1, pk2, rk2 string) error {
	return errorf(edm.CodeEntityAlreadyExists, "unique index %q cannot be built: entities (%q, %q) and (%q, %q) both hold (%s)",
		ix.spec.Name, pk1, rk1, pk2, rk2, keys.FormatTuple(tuple, ix.spec.Properties))
}

// SetBuildChunk sets how many entities a step of a build indexes, for
// tests that need many steps, and returns a function that restores the
// previous value. It must not run during a build.
func SetBuildChunk(n int) (restore func()) {
	old := buildChunk
	buildChunk = n
	return func() { buildChunk = old }
}

// SetBuildHook sets a function a build calls before each step with the
// entities indexed so far, for tests that interleave writes with a
// build, and returns a function that restores the previous one. It must
// not run during a build.
func SetBuildHook(f func(done int64)) (restore func()) {
	old := buildHook
	buildHook = f
	return func() { buildHook = old }
}
