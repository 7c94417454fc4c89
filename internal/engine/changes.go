package engine

// The change feed: a record of every committed change of a table whose
// feed is on, written in the commit's own Pebble batch.
//
// Keyspace, under the reserved metadata table ID (so no record can
// collide with an entity key, and a table's range deletion on drop
// leaves its feed alone; the drop writes the feed's final record):
//
//	meta | 'f' | table ID (8 bytes BE) | seq (8 bytes BE)  ->  change record
//	meta | 'F' | table ID (8 bytes BE)                    ->  JSON feed settings
//	meta | 'Q'                                            ->  seq floor (8 bytes BE)
//
// The sequence is store-wide. It is assigned under changeFeeds.mu, which
// is held from the assignment until Pebble has applied the batch (and
// published it to readers), so key order is commit order: a batch with a
// greater seq is applied after every batch with a smaller one. With
// synced commits, the lock is released before the sync wait, so commits
// still share fsyncs.
//
// Readers see records only up to the readable end (changeFeeds.end): a
// synced commit's records become readable when its sync ends (Pebble
// syncs its log in order, so every earlier batch is durable too), a
// NoSync commit's when Pebble has applied it. So a follower never sees a
// synced record a crash could lose.
//
// On Open the counter resumes from the greatest seq stored: the last
// record of each feed, or the floor key, written whenever records are
// deleted (by retention, DisableChangeFeed), so the counter never goes
// back below a seq once handed out and durable.

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/tablestore/tablestore/driver"
	"github.com/tablestore/tablestore/edm"
	"github.com/tablestore/tablestore/internal/keys"
)

const (
	changeRecordTag   = 'f'
	changeSettingsTag = 'F'
	changeSeqTag      = 'Q'
)

// changeKeyLen is the length of a record's key.
const changeKeyLen = 8 + 1 + 8 + 8

// changeKey appends the key of record seq of table id's feed to dst.
func changeKey(dst []byte, id, seq uint64) []byte {
	dst = keys.TablePrefix(dst, keys.MetaTableID)
	dst = append(dst, changeRecordTag)
	dst = binary.BigEndian.AppendUint64(dst, id)
	return binary.BigEndian.AppendUint64(dst, seq)
}

// changeSpan returns [start, end) of table id's records after seq from
// up to and including seq to.
func changeSpan(id, from, to uint64) (start, end []byte) {
	start = changeKey(nil, id, from+1)
	if to == ^uint64(0) {
		end = append(changeKey(nil, id, 0)[:17], 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff)
		return start, end
	}
	return start, changeKey(nil, id, to+1)
}

func changeSettingsKey(id uint64) []byte {
	k := append(keys.TablePrefix(nil, keys.MetaTableID), changeSettingsTag)
	return binary.BigEndian.AppendUint64(k, id)
}

func changeSeqKey() []byte {
	return append(keys.TablePrefix(nil, keys.MetaTableID), changeSeqTag)
}

// feedSettings are one feed's settings as stored (JSON) and held in
// memory. A value in changeFeeds.feeds is never modified: a change
// stores a new one.
type feedSettings struct {
	Images    driver.ImageMode `json:"images"`
	Retention time.Duration    `json:"retention"`
	// Floor is the position before the oldest record kept: records at or
	// below it are gone (pruned, or older than the feed).
	Floor uint64 `json:"floor"`
	// Dropped is the drop record's Timestamp (ticks) once the table is
	// deleted; the feed's records stay for readers until retention
	// passes, then go with these settings.
	Dropped int64 `json:"dropped,omitempty"`
}

// changeFeeds is the engine's feed state.
type changeFeeds struct {
	// mu orders commits that write records: held from the seq's
	// assignment until Pebble has applied the batch.
	mu  sync.Mutex
	seq uint64 // the greatest seq assigned; REQUIRES: mu

	// end is the readable end: every record at or below it is applied
	// (and durable when commits sync).
	end atomic.Uint64

	// feeds maps table IDs to settings, copy on write under setMu; a
	// table with no entry has its feed off.
	setMu sync.Mutex
	feeds atomic.Pointer[map[uint64]*feedSettings]

	// wake is closed, and replaced, when end moves and a follower waits
	// (waiting); guarded by wakeMu.
	wakeMu  sync.Mutex
	wake    chan struct{}
	waiting bool

	// stop ends the pruner (closed by Close), pruned is signalled after
	// each pruning round (tests), kick wakes the pruner early.
	stop    chan struct{}
	stopped sync.Once
	kick    chan struct{}
	pruner  sync.WaitGroup
	rounds  atomic.Uint64
}

// feed returns table id's feed settings, nil when the feed is off (or
// the table is dropped).
func (c *changeFeeds) feed(id uint64) *feedSettings {
	m := c.feeds.Load()
	if m == nil {
		return nil
	}
	s := (*m)[id]
	if s == nil || s.Dropped != 0 {
		return nil
	}
	return s
}

// setFeed stores s as table id's settings in memory (nil removes them).
// REQUIRES: setMu.
func (c *changeFeeds) setFeed(id uint64, s *feedSettings) {
	old := c.feeds.Load()
	m := make(map[uint64]*feedSettings, len(*old)+1)
	for k, v := range *old {
		m[k] = v
	}
	if s == nil {
		delete(m, id)
	} else {
		m[id] = s
	}
	c.feeds.Store(&m)
}

// publish moves the readable end to seq (never back) and wakes the
// followers.
func (c *changeFeeds) publish(seq uint64) {
	for {
		cur := c.end.Load()
		if cur >= seq || c.end.CompareAndSwap(cur, seq) {
			break
		}
	}
	c.wakeMu.Lock()
	if c.waiting {
		close(c.wake)
		c.wake = make(chan struct{})
		c.waiting = false
	}
	c.wakeMu.Unlock()
}

// waitChan returns a channel closed when the readable end next moves.
func (c *changeFeeds) waitChan() <-chan struct{} {
	c.wakeMu.Lock()
	defer c.wakeMu.Unlock()
	c.waiting = true
	return c.wake
}

// loadChanges reads the feeds' settings and recovers the sequence
// counter at Open, and starts the pruner.
func (db *Engine) loadChanges() error {
	c := &db.changes
	c.wake = make(chan struct{})
	c.stop = make(chan struct{})
	c.kick = make(chan struct{}, 1)
	m := map[uint64]*feedSettings{}
	c.feeds.Store(&m)
	prefix := changeSettingsKey(0)[:9]
	it, err := db.pdb.NewIter(&pebble.IterOptions{LowerBound: prefix, UpperBound: []byte{0, 0, 0, 0, 0, 0, 0, 0, changeSettingsTag + 1}})
	if err != nil {
		return db.storageErr("open: read the change feeds", err)
	}
	for it.First(); it.Valid(); it.Next() {
		k := it.Key()
		s := new(feedSettings)
		if len(k) != 17 || json.Unmarshal(it.Value(), s) != nil {
			_ = it.Close()
			return &driver.CorruptError{Op: fmt.Sprintf("open: read the change feed settings %q", k), Err: fmt.Errorf("malformed")}
		}
		m[binary.BigEndian.Uint64(k[9:])] = s
	}
	if err := it.Close(); err != nil {
		return db.storageErr("open: read the change feeds", err)
	}
	// The counter: the floor key, each feed's floor and its last record.
	var seq uint64
	v, closer, err := db.pdb.Get(changeSeqKey())
	switch {
	case err == pebble.ErrNotFound:
	case err != nil:
		return db.storageErr("open: read the change sequence", err)
	default:
		if len(v) == 8 {
			seq = binary.BigEndian.Uint64(v)
		}
		_ = closer.Close()
	}
	if len(m) > 0 {
		lo, hi := changeKey(nil, 0, 0)[:9], []byte{0, 0, 0, 0, 0, 0, 0, 0, changeRecordTag + 1}
		it, err := db.pdb.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: hi})
		if err != nil {
			return db.storageErr("open: read the change feeds", err)
		}
		for id, s := range m {
			seq = max(seq, s.Floor)
			_, end := changeSpan(id, 0, ^uint64(0))
			if it.SeekLT(end) && len(it.Key()) == changeKeyLen && binary.BigEndian.Uint64(it.Key()[9:17]) == id {
				seq = max(seq, binary.BigEndian.Uint64(it.Key()[17:]))
			}
		}
		if err := it.Close(); err != nil {
			return db.storageErr("open: read the change feeds", err)
		}
	}
	c.seq = seq
	c.end.Store(seq)
	if !db.opts.readOnly {
		c.pruner.Add(1)
		go db.runPruner()
	}
	return nil
}

// stopChanges stops the pruner and wakes every follower; Close calls it
// before it waits for operations in flight.
func (db *Engine) stopChanges() {
	c := &db.changes
	if c.stop == nil {
		return
	}
	c.stopped.Do(func() { close(c.stop) })
	c.pruner.Wait()
}

// changeBatch is the records one commit adds: their values, built
// before the commit takes the sequence lock, and their table.
type changeBatch struct {
	table  uint64
	values [][]byte
}

// encodeChange appends the value of one record to dst:
//
//	version 1 | op | kind | uvarint index | uvarint count | varint ticks |
//	uvarint len | pk | uvarint len | rk | uvarint len | to | image record
//
// The index and count are those of the commit's records. An expiry
// record (ChangeExpire; see encodeExpire) has, in place of an image, the
// removed entity's Timestamp and its expiry, two varints.
func encodeChange(dst []byte, op driver.ChangeOp, kind driver.CommitKind, index, count int, ts int64, pk, rk, to string, image []byte) []byte {
	dst = append(dst, 1, byte(op), byte(kind))
	dst = binary.AppendUvarint(dst, uint64(index))
	dst = binary.AppendUvarint(dst, uint64(count))
	dst = binary.AppendVarint(dst, ts)
	for _, s := range [3]string{pk, rk, to} {
		dst = binary.AppendUvarint(dst, uint64(len(s)))
		dst = append(dst, s...)
	}
	return append(dst, image...)
}

// encodeExpire appends the value of an expiry record to dst: the
// removed entity (pk, rk) had Timestamp removed and expired at expiry.
func encodeExpire(dst []byte, kind driver.CommitKind, index, count int, ts int64, pk, rk string, removed, expiry int64) []byte {
	dst = encodeChange(dst, driver.ChangeExpire, kind, index, count, ts, pk, rk, "", nil)
	dst = binary.AppendVarint(dst, removed)
	return binary.AppendVarint(dst, expiry)
}

// decodeChange decodes a record's value; the record's strings are
// copies, its image aliases v.
func decodeChange(seq uint64, v []byte) (driver.ChangeRecord, error) {
	bad := func(what string) (driver.ChangeRecord, error) {
		return driver.ChangeRecord{}, fmt.Errorf("change record %d: %s", seq, what)
	}
	if len(v) < 3 || v[0] != 1 {
		return bad("unknown version")
	}
	r := driver.ChangeRecord{Seq: seq, Op: driver.ChangeOp(v[1]), Kind: driver.CommitKind(v[2])}
	v = v[3:]
	var n int
	u, n := binary.Uvarint(v)
	if n <= 0 || u > 1<<20 {
		return bad("bad index")
	}
	r.Index, v = int(u), v[n:]
	if u, n = binary.Uvarint(v); n <= 0 || u > 1<<20 {
		return bad("bad count")
	}
	r.Count, v = int(u), v[n:]
	ts, n := binary.Varint(v)
	if n <= 0 {
		return bad("bad timestamp")
	}
	r.Timestamp, v = ts, v[n:]
	var strs [3]string
	for i := range strs {
		l, n := binary.Uvarint(v)
		if n <= 0 || l > uint64(len(v)-n) {
			return bad("bad key")
		}
		strs[i], v = string(v[n:n+int(l)]), v[n+int(l):]
	}
	r.PartitionKey, r.RowKey, r.ToRowKey = strs[0], strs[1], strs[2]
	if r.Op == driver.ChangeExpire {
		if r.Removed, n = binary.Varint(v); n <= 0 {
			return bad("bad removed Timestamp")
		}
		v = v[n:]
		if r.Expiry, n = binary.Varint(v); n <= 0 || n != len(v) {
			return bad("bad expiry")
		}
		return r, nil
	}
	if len(v) > 0 {
		if _, err := driver.Record(v).Timestamp(); err != nil {
			return bad("bad image")
		}
		r.Record = driver.Record(v)
	}
	return r, nil
}

// changeRecords builds the records of a commit of actions to table id at
// Timestamps ts, or returns nil when the table's feed is off; applied,
// when not nil, says which actions the commit applies (a bulk commit),
// value gives each action's stored value as commit computed it, and
// gone, when not nil, the expired entities the actions replace: each
// gets an expiry record just before its action's record.
// REQUIRES: db.catMu held in read mode (the feed cannot be switched
// meanwhile).
func (db *Engine) changeRecords(id uint64, kind driver.CommitKind, ts stamps, actions []driver.Action, applied []bool, gone []goneEntity, value func(int) ([]byte, []driver.Property)) *changeBatch {
	s := db.changes.feed(id)
	if s == nil {
		return nil
	}
	count := 0
	for i := range actions {
		if applied == nil || applied[i] {
			count++
			if gone != nil && gone[i].ok {
				count++
			}
		}
	}
	// Every value goes into one slab, sized up front, with the image
	// encoded in place.
	size := 0
	for i := range actions {
		if applied != nil && !applied[i] {
			continue
		}
		a := &actions[i]
		size += 3 + 3*binary.MaxVarintLen32 + binary.MaxVarintLen64 + len(a.PartitionKey) + len(a.RowKey) + 1
		if gone != nil && gone[i].ok {
			size += 3 + 3*binary.MaxVarintLen32 + 3*binary.MaxVarintLen64 + len(a.PartitionKey) + len(a.RowKey) + 1
		}
		if s.Images == driver.ImagesNew && a.Type != driver.ActionDelete {
			if rec, props := value(i); rec != nil {
				size += len(rec)
			} else {
				size += driver.EncodedLen(props)
			}
		}
	}
	cb := &changeBatch{table: id, values: make([][]byte, 0, count)}
	slab := make([]byte, 0, size)
	for i := range actions {
		if applied != nil && !applied[i] {
			continue
		}
		a := &actions[i]
		if gone != nil && gone[i].ok {
			start := len(slab)
			slab = encodeExpire(slab, kind, len(cb.values), count, ts.of(i), a.PartitionKey, a.RowKey, gone[i].ts, gone[i].expiry)
			cb.values = append(cb.values, slab[start:len(slab):len(slab)])
		}
		start := len(slab)
		slab = encodeChange(slab, driver.ChangeOp(a.Type), kind, len(cb.values), count, ts.of(i), a.PartitionKey, a.RowKey, "", nil)
		if s.Images == driver.ImagesNew && a.Type != driver.ActionDelete {
			if rec, props := value(i); rec != nil {
				n := len(slab)
				slab = append(slab, rec...)
				_ = driver.Record(slab[n:]).SetTimestamp(ts.of(i)) // succeeded on the same record in the commit
			} else {
				slab, _ = driver.Encode(slab, ts.of(i), props) // succeeded on the same properties in the commit
			}
		}
		cb.values = append(cb.values, slab[start:len(slab):len(slab)])
	}
	return cb
}

// expiryRecords builds the expiry records of a sweep's commit at
// Timestamp ts, which removes the partition's entities dels (stored as
// reads, expired under s), or returns nil when the table's feed is off.
// REQUIRES: db.catMu held in read mode.
func (db *Engine) expiryRecords(id uint64, s *ttlSettings, ts int64, dels []driver.Action, reads []storedEntity) *changeBatch {
	if db.changes.feed(id) == nil || len(dels) == 0 {
		return nil
	}
	cb := &changeBatch{table: id, values: make([][]byte, len(dels))}
	for i := range dels {
		g := goneOf(s, reads[i])
		cb.values[i] = encodeExpire(nil, driver.CommitSweep, i, len(dels), ts, dels[i].PartitionKey, dels[i].RowKey, g.ts, g.expiry)
	}
	return cb
}

// singleChange builds the one record of a range deletion or a drop, or
// nil when the table's feed is off (always one for a drop: force).
func (db *Engine) singleChange(id uint64, op driver.ChangeOp, kind driver.CommitKind, pk, from, to string) (*changeBatch, error) {
	if db.changes.feed(id) == nil {
		return nil, nil
	}
	ts, err := db.clock.next(edm.TicksFromTime(db.opts.Clock()), 0)
	if err != nil {
		return nil, err
	}
	return &changeBatch{table: id, values: [][]byte{encodeChange(nil, op, kind, 0, 1, ts, pk, from, to, nil)}}, nil
}

// commitChanges commits b with the records of cb (none when cb is nil)
// under the sequence lock, with opts; see the keyspace comment. It hands
// b to Pebble only when admitWrite allows and the write's caller has not
// given up (see boundedWrite).
func (db *Engine) commitChanges(ctx context.Context, b *pebble.Batch, cb *changeBatch, opts *pebble.WriteOptions) error {
	if err := db.admitWrite(ctx); err != nil {
		return err
	}
	if !handOverOf(ctx).begin() {
		return errAbandoned
	}
	return db.applyBatch(b, cb, opts)
}

// feedInfo resolves the table and its feed settings (nil: off).
func (t *table) feedInfo() (tableInfo, *feedSettings, error) {
	info, err := t.resolve()
	if err != nil {
		return tableInfo{}, nil, err
	}
	return info, t.db.changes.feed(info.id), nil
}

var _ driver.ChangeFeeder = (*table)(nil)

// EnableChangeFeed implements driver.ChangeFeeder with one synced write
// under the catalog lock, so no commit is in flight: every later commit
// is recorded, no earlier one.
func (t *table) EnableChangeFeed(ctx context.Context, s driver.ChangeFeedSettings) (err error) {
	release, err := t.db.enterWrite(ctx)
	if err != nil {
		return err
	}
	defer release()
	op := "enable the change feed of table " + t.name
	defer t.db.recoverStop(op, &err)
	db := t.db
	db.catMu.Lock()
	defer db.catMu.Unlock()
	info, err := t.resolveLocked()
	if err != nil {
		return err
	}
	c := &db.changes
	c.setMu.Lock()
	defer c.setMu.Unlock()
	ns := &feedSettings{Images: s.Images, Retention: s.Retention}
	if old := c.feed(info.id); old != nil {
		ns.Floor = old.Floor
	} else {
		// A new feed starts past every seq issued: a cursor of an earlier
		// feed of the table (disabled since) is older than the floor.
		// Every seq up to it is applied, since no commit is in flight.
		c.mu.Lock()
		c.seq++
		ns.Floor = c.seq
		c.mu.Unlock()
		c.publish(ns.Floor)
	}
	v, _ := json.Marshal(ns)
	if err := db.setKey(changeSettingsKey(info.id), v, pebble.Sync); err != nil {
		return db.storageErr(op, err)
	}
	c.setFeed(info.id, ns)
	select {
	case c.kick <- struct{}{}:
	default:
	}
	return nil
}

// DisableChangeFeed implements driver.ChangeFeeder: the settings and
// every record go in one synced batch, with the sequence floor.
func (t *table) DisableChangeFeed(ctx context.Context) (err error) {
	release, err := t.db.enterWrite(ctx)
	if err != nil {
		return err
	}
	defer release()
	op := "disable the change feed of table " + t.name
	defer t.db.recoverStop(op, &err)
	db := t.db
	db.catMu.Lock()
	defer db.catMu.Unlock()
	info, err := t.resolveLocked()
	if err != nil {
		return err
	}
	c := &db.changes
	c.setMu.Lock()
	defer c.setMu.Unlock()
	old := c.feed(info.id)
	if old == nil {
		return nil
	}
	// Off first, so no write records a change the deletion misses; back
	// on when the deletion fails, as the stored settings still are.
	c.setFeed(info.id, nil)
	if err := db.deleteFeed(info.id, pebble.Sync); err != nil {
		c.setFeed(info.id, old)
		return db.storageErr(op, err)
	}
	return nil
}

// deleteFeed deletes table id's settings and records with the sequence
// floor in one batch.
func (db *Engine) deleteFeed(id uint64, opts *pebble.WriteOptions) error {
	b := db.pdb.NewBatch()
	defer b.Close()
	_, end := changeSpan(id, 0, ^uint64(0))
	_ = b.DeleteRange(changeKey(nil, id, 0), end, nil)
	_ = b.Delete(changeSettingsKey(id), nil)
	db.changes.mu.Lock()
	seq := db.changes.seq
	db.changes.mu.Unlock()
	_ = b.Set(changeSeqKey(), binary.BigEndian.AppendUint64(nil, seq), nil)
	return db.commitBatch(b, opts)
}

// dropChanges adds to b, a table's deletion, the feed's final record and
// the settings marked dropped. It returns the record for commitChanges
// and the settings to publish with setFeed once the commit succeeded
// (both nil when the feed is off). Published before, they would tell a
// reader at the feed's end that the table is gone while its final
// record is not yet readable.
// REQUIRES: db.catMu held in write mode, and db.changes.setMu held
// until the settings are published (the pruner must not move the floor
// in between).
func (db *Engine) dropChanges(b *pebble.Batch, id uint64) (*changeBatch, *feedSettings, error) {
	cb, err := db.singleChange(id, driver.ChangeDropTable, driver.CommitDropTable, "", "", "")
	if cb == nil || err != nil {
		return nil, nil, err
	}
	ns := *db.changes.feed(id)
	ns.Dropped = edm.TicksFromTime(db.opts.Clock())
	v, _ := json.Marshal(&ns)
	_ = b.Set(changeSettingsKey(id), v, nil)
	return cb, &ns, nil
}

// ChangeFeed implements driver.ChangeFeeder.
func (t *table) ChangeFeed(ctx context.Context) (driver.ChangeFeedState, error) {
	if err := t.db.checkContext(ctx); err != nil {
		return driver.ChangeFeedState{}, err
	}
	info, s, err := t.feedInfo()
	if err != nil {
		return driver.ChangeFeedState{}, err
	}
	st := driver.ChangeFeedState{Table: info.id, End: t.db.changes.end.Load()}
	if s != nil {
		st.Enabled = true
		st.Settings = driver.ChangeFeedSettings{Retention: s.Retention, Images: s.Images}
		st.Oldest = s.Floor
	}
	return st, nil
}
