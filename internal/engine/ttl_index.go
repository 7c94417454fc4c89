package engine

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"

	"github.com/cockroachdb/pebble/v2"
	"github.com/tablestore/tablestore/driver"
	"github.com/tablestore/tablestore/edm"
	"github.com/tablestore/tablestore/internal/keys"
)

// The expiry index of a table with TTL settings lies in the table's index
// keyspace under a reserved index ID, so DeleteTable's range deletion
// takes it too:
//
//	table | 0xFF | 0xFFFFFFFF | expiry ticks (8 bytes BE) | PK | 0x00 | RK  ->  empty
//
// Every write of a TTL table keeps it exact in the write's own batch:
// the stored entity's entry is deleted and the new one's set. A range
// deletion (DeleteRange) leaves the entries of the entities it removes;
// the sweeper finds those entities gone and drops the entries. SetTTL
// rebuilds the index, since new settings move every expiry.
const expiryIndexID = 0xFFFFFFFF

// expiryPrefix appends the expiry index's key prefix of table id.
func expiryPrefix(dst []byte, id uint64) []byte { return keys.IndexPrefix(dst, id, expiryIndexID) }

// expiryKey appends the expiry index entry of (pk, rk) expiring at ticks.
func expiryKey(dst []byte, id uint64, ticks int64, pk, rk string) []byte {
	dst = expiryPrefix(dst, id)
	dst = binary.BigEndian.AppendUint64(dst, uint64(ticks))
	dst = append(dst, pk...)
	dst = append(dst, keys.Sep)
	return append(dst, rk...)
}

// expirySpan returns [start, end) of table id's expiry index, as
// DeleteRange arguments.
func expirySpan(id uint64) (start, end []byte, _ *pebble.WriteOptions) {
	start, end = keys.IndexSpan(id, expiryIndexID)
	return start, end, nil
}

// splitExpiryKey returns the parts of an expiry index entry.
func splitExpiryKey(k []byte) (ticks int64, pk, rk []byte, err error) {
	if len(k) < keys.IndexPrefixLen+8+1 {
		return 0, nil, nil, keys.ErrMalformedIndex
	}
	ticks = int64(binary.BigEndian.Uint64(k[keys.IndexPrefixLen:]))
	rest := k[keys.IndexPrefixLen+8:]
	i := bytes.IndexByte(rest, keys.Sep)
	if i < 0 {
		return 0, nil, nil, keys.ErrMalformedIndex
	}
	return ticks, rest[:i], rest[i+1:], nil
}

// writeExpiries adds to b the expiry index changes of actions committed
// with Timestamps ts: each stored entity's entry deleted (reads[i], found
// even when expired), each written entity's set. applied, if not nil,
// says which actions are in the batch.
// REQUIRES: the actions' partition locks and db.catMu (read mode) are held.
func (db *Engine) writeExpiries(b *pebble.Batch, s *ttlSettings, id uint64, actions []driver.Action, applied []bool,
	reads []storedEntity, value func(int) ([]byte, []driver.Property), ts stamps) {
	var k []byte
	for i := range actions {
		if applied != nil && !applied[i] {
			continue
		}
		a := &actions[i]
		if reads != nil && reads[i].found {
			if e, ok := s.expiry(driver.Record(reads[i].val)); ok {
				k = expiryKey(k[:0], id, e, a.PartitionKey, a.RowKey)
				_ = b.Delete(k, nil)
			}
		}
		if a.Type == driver.ActionDelete {
			continue
		}
		rec, props := value(i)
		var e int64
		var ok bool
		if rec != nil {
			e, ok = s.recordExpiry(driver.Record(rec), ts.of(i))
		} else {
			e, ok = s.propsExpiry(props, ts.of(i))
		}
		if ok {
			k = expiryKey(k[:0], id, e, a.PartitionKey, a.RowKey)
			_ = b.Set(k, nil, nil)
		}
	}
}

// recordExpiry is expiry for a record about to be stored with Timestamp
// ts.
func (s *ttlSettings) recordExpiry(rec driver.Record, ts int64) (int64, bool) {
	if s.property != "" {
		if v, ok := rec.Lookup(s.property); ok && v.Type == edm.TypeDateTime {
			return v.Int, true
		}
	}
	if s.def > 0 {
		return ts + s.def, true
	}
	return 0, false
}

// absentIfExpired returns st as a precondition sees it: not found when
// the stored entity has expired at now.
func (s *ttlSettings) absentIfExpired(st storedEntity, now int64) storedEntity {
	if s != nil && st.found && st.err == nil && s.expired(st.val, now) {
		st.found, st.val = false, nil
	}
	return st
}

// goneEntity is a stored entity removed because it expired: its
// Timestamp and its expiry (ok false: none).
type goneEntity struct {
	ts, expiry int64
	ok         bool
}

// goneOf returns st's Timestamp and expiry under s. A record whose
// Timestamp cannot be read has an expiry record with Timestamp 0.
func goneOf(s *ttlSettings, st storedEntity) goneEntity {
	rec := driver.Record(st.val)
	e, ok := s.expiry(rec)
	ts, _ := rec.Timestamp()
	return goneEntity{ts: ts, expiry: e, ok: ok}
}

// replacedExpired returns, by action, the stored entities that had
// expired at now and that the applied actions (applied nil: all)
// replace, for their expiry records; nil when there are none or the
// table's feed is off. A write over an expired entity the sweeper has
// not removed yet records its removal first, so a consumer replaying
// the feed never sees a write land on an entity the table no longer has.
func (db *Engine) replacedExpired(id uint64, s *ttlSettings, reads []storedEntity, applied []bool, now int64) []goneEntity {
	if s == nil || reads == nil || db.changes.feed(id) == nil {
		return nil
	}
	var gone []goneEntity
	for i := range reads {
		if (applied != nil && !applied[i]) || !reads[i].found || reads[i].err != nil || !s.expired(reads[i].val, now) {
			continue
		}
		if gone == nil {
			gone = make([]goneEntity, len(reads))
		}
		gone[i] = goneOf(s, reads[i])
	}
	return gone
}

// ttlNowFor returns table id's settings and, when it has some, the
// expiry clock's now.
func (db *Engine) ttlNowFor(id uint64) (*ttlSettings, int64, error) {
	s := db.ttlFor(id)
	if s == nil {
		return nil, 0, nil
	}
	now, err := db.expiryNow()
	return s, now, err
}

// ttlRebuildHook, when set (by tests), is called as a rebuild of table
// id's expiry index starts.
var ttlRebuildHook func(id uint64)

// rebuildExpiryIndex adds to b the removal of table id's expiry index
// and, for settings s (nil: none), its entries for every stored entity,
// found by a scan of the table.
// REQUIRES: db.catMu held, and table id's gate closed (see SetTTL).
func (db *Engine) rebuildExpiryIndex(ctx context.Context, b *pebble.Batch, id uint64, s *ttlSettings) error {
	if ttlRebuildHook != nil {
		ttlRebuildHook(id)
	}
	_ = b.DeleteRange(expirySpan(id))
	if s == nil {
		return nil
	}
	start, end := keys.EntitySpan(id)
	it, err := db.pdb.NewIter(&pebble.IterOptions{LowerBound: start, UpperBound: end})
	if err != nil {
		return db.storageErr(fmt.Sprintf("scan table #%d for its expiry index", id), err)
	}
	defer it.Close()
	var k []byte
	n := 0
	for it.First(); it.Valid(); it.Next() {
		if n++; n%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		_, pk, rk, err := keys.Split(it.Key())
		if err != nil {
			return corruptRecord(it.Key(), err)
		}
		val, err := it.ValueAndErr()
		if err != nil {
			return db.storageErr(fmt.Sprintf("scan table #%d for its expiry index", id), err)
		}
		if e, ok := s.expiry(driver.Record(val)); ok {
			k = expiryKey(k[:0], id, e, string(pk), string(rk))
			_ = b.Set(k, nil, nil)
		}
	}
	return db.storageErr(fmt.Sprintf("scan table #%d for its expiry index", id), it.Error())
}
