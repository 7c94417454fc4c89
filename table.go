package tablestore

import (
	"context"
	"sync"

	"github.com/tablestore/tablestore/driver"
	"github.com/tablestore/tablestore/edm"
	"github.com/tablestore/tablestore/internal/entityenc"
	"github.com/tablestore/tablestore/internal/limits"
	"github.com/tablestore/tablestore/internal/structmap"
)

// Table is a handle on one table. It is cheap, safe for concurrent use,
// and addresses the table by name: after DeleteTable and CreateTable of the
// same name, an old handle addresses the new table.
//
// Every write validates its input completely before it reads or writes
// anything, so a rejected write changes nothing. Writes to one partition
// are serialized; reads take no lock and see only committed writes.
//
// Its methods live by concept: reads and single writes here, queries and
// plans in query.go, transactions in transaction.go and batch.go, typed
// reads and writes (every name with Struct) in structs.go, secondary
// indexes in index.go, the change feed in changes.go, expiry (TTL) in
// ttl.go, the bulk writer in bulk.go, statistics in admin.go. Replication
// of tables is package replicate. The writes that collect entities (a
// Batch, a Partition, the bulk writer) take any ActionEntity; Table's own
// take an *Entity, with the Struct shortcuts beside them.
type Table struct {
	db   *DB
	name string
	drv  driver.Table
}

// Name returns the name the handle was made with.
func (t *Table) Name() string { return t.name }

// Exists reports whether the table the handle names exists; see
// DB.TableExists.
func (t *Table) Exists(ctx context.Context) (bool, error) {
	return t.db.TableExists(ctx, t.name)
}

// GetOptions adjust a Get.
type GetOptions struct {
	// Select lists the properties to return; nil returns all. PartitionKey,
	// RowKey, Timestamp and ETag are always returned; a selected property
	// the entity lacks is absent from Properties.
	Select []string
}

// Get reads one entity. The returned entity is the caller's to keep.
// Errors: ResourceNotFound, TableNotFound, InvalidInput for a bad Select,
// and the key codes of Insert.
func (t *Table) Get(ctx context.Context, partitionKey, rowKey string, opts *GetOptions) (*Entity, error) {
	r, sel, err := t.get(ctx, partitionKey, rowKey, opts)
	if err != nil {
		return nil, err
	}
	return decodeRow(r, sel, true) // errors already name the entity
}

// get validates a Get's arguments and reads the row, which is the
// caller's; it returns the projection too.
func (t *Table) get(ctx context.Context, partitionKey, rowKey string, opts *GetOptions) (driver.Row, []string, error) {
	if err := t.db.checkContext(ctx); err != nil {
		return driver.Row{}, nil, err
	}
	if err := entityenc.ValidateKey("PartitionKey", partitionKey); err != nil {
		return driver.Row{}, nil, coded(err)
	}
	if err := entityenc.ValidateKey("RowKey", rowKey); err != nil {
		return driver.Row{}, nil, coded(err)
	}
	var sel []string
	if opts != nil && opts.Select != nil {
		if err := entityenc.ValidateSelect(opts.Select); err != nil {
			return driver.Row{}, nil, coded(err)
		}
		sel = opts.Select
	}
	r, err := t.drv.Get(ctx, partitionKey, rowKey, sel)
	if err != nil {
		return driver.Row{}, nil, mapError(err, false)
	}
	return r, sel, nil
}

// Insert adds a new entity. On success it sets e.Timestamp and e.ETag.
// Errors: EntityAlreadyExists, TableNotFound, and the validation codes
// (OutOfRangeInput, KeyValueTooLarge,
// PropertyNameInvalid, PropertyNameTooLong, InvalidValueType,
// PropertyValueTooLarge, TooManyProperties, EntityTooLarge, InvalidInput).
func (t *Table) Insert(ctx context.Context, e *Entity) error {
	return t.write(ctx, ActionInsert, e, "")
}

// Update changes an existing entity if its ETag matches ifMatch (ETagAny
// matches any). Merge keeps stored properties not in e; Replace drops
// them. On success it sets e.Timestamp and e.ETag.
// Errors: ResourceNotFound when absent, UpdateConditionNotSatisfied on an
// ETag mismatch, InvalidInput for an empty or malformed ifMatch (see
// ETag) or a bad mode,
// EntityTooLarge or TooManyProperties when a merge result exceeds Azure's
// limits, TableNotFound, and the validation codes of Insert.
func (t *Table) Update(ctx context.Context, e *Entity, mode UpdateMode, ifMatch ETag) error {
	typ, err := modeAction(mode, ActionUpdateMerge, ActionUpdateReplace)
	if err != nil {
		return err
	}
	return t.write(ctx, typ, e, ifMatch)
}

// Upsert inserts the entity, or updates it (Merge or Replace) if it exists,
// whatever its ETag. On success it sets e.Timestamp and e.ETag.
// Errors: those of Update except ResourceNotFound and
// UpdateConditionNotSatisfied.
func (t *Table) Upsert(ctx context.Context, e *Entity, mode UpdateMode) error {
	typ, err := modeAction(mode, ActionUpsertMerge, ActionUpsertReplace)
	if err != nil {
		return err
	}
	return t.write(ctx, typ, e, "")
}

// Delete removes an entity if its ETag matches ifMatch (ETagAny matches
// any). Errors: ResourceNotFound, UpdateConditionNotSatisfied,
// InvalidInput for an empty or malformed ifMatch (see ETag),
// TableNotFound, and the key codes.
func (t *Table) Delete(ctx context.Context, partitionKey, rowKey string, ifMatch ETag) error {
	return t.write(ctx, ActionDelete, &Entity{PartitionKey: partitionKey, RowKey: rowKey}, ifMatch)
}

func modeAction(mode UpdateMode, merge, replace ActionType) (ActionType, error) {
	switch mode {
	case Merge:
		return merge, nil
	case Replace:
		return replace, nil
	}
	return 0, newError(edm.CodeInvalidInput, "unknown update mode %d", uint8(mode))
}

// write runs one single-entity write as a one-action transaction.
func (t *Table) write(ctx context.Context, typ ActionType, e *Entity, ifMatch ETag) error {
	s := getScratch()
	defer putScratch(s)
	a, buf, _, err := prepareAction(s.buf[:0], typ, e, ifMatch, nil)
	res, err := t.commitOne(ctx, s, a, buf, err)
	if err == nil && typ != ActionDelete {
		e.Timestamp, e.ETag = res.Timestamp, ETag(res.ETag)
	}
	return err
}

// writeEntity is write for any form of ActionEntity: an *Entity, a
// *RawEntity or StructEntity(v), each as its own write path encodes it.
func (t *Table) writeEntity(ctx context.Context, typ ActionType, e ActionEntity, ifMatch ETag) error {
	switch e := e.(type) {
	case *RawEntity:
		if e != nil {
			return t.writeRaw(ctx, typ, e, ifMatch)
		}
	case *structEntity:
		if e != nil && e.v != nil {
			return t.writeStruct(ctx, typ, e.v, ifMatch)
		}
	case *Entity:
		return t.write(ctx, typ, e, ifMatch)
	}
	return errNilEntity()
}

// errNilEntity is the error of a write without an entity.
func errNilEntity() error { return newError(edm.CodeInvalidInput, "entity is nil") }

// writeRaw is write for an entity in its stored form.
func (t *Table) writeRaw(ctx context.Context, typ ActionType, e *RawEntity, ifMatch ETag) error {
	s := getScratch()
	defer putScratch(s)
	a, buf, _, err := prepareRaw(s.buf[:0], typ, e, ifMatch)
	res, err := t.commitOne(ctx, s, a, buf, err)
	if err == nil && typ != ActionDelete {
		e.Timestamp, e.ETag = res.Timestamp, ETag(res.ETag)
	}
	return err
}

// commitOne commits the single action a, whose record (unless it is a
// delete) is buf, keeping buf in s for reuse. prepareErr, the error of
// preparing a, is returned as it is without committing.
func (t *Table) commitOne(ctx context.Context, s *txnScratch, a driver.Action, buf []byte, prepareErr error) (driver.CommitResult, error) {
	s.buf = buf
	if prepareErr != nil {
		return driver.CommitResult{}, prepareErr
	}
	if a.Type != driver.ActionDelete {
		a.Record = buf
	}
	s.acts = append(s.acts[:0], a)
	res, err := t.drv.Commit(ctx, s.acts)
	if err != nil {
		return res, mapError(err, false)
	}
	return res, nil
}

// prepareAction validates one action without reading anything: keys, the
// If-Match rules of its type, and every property. Unless the action is a
// delete it appends the entity's record, with a zero Timestamp, to buf
// (the caller sets the action's Record from it). It returns the extended
// buffer (buf on error) and the entity's size by Azure's formula. names,
// if not nil, carries checked property names from one entity to the
// next. Errors carry Azure's codes (see entityenc.KeyUnits and
// entityenc.AppendProperties).
func prepareAction(buf []byte, typ ActionType, e *Entity, ifMatch ETag, names *entityenc.NameCache) (driver.Action, []byte, int, error) {
	var a driver.Action
	buf, size, err := prepareActionInto(&a, buf, typ, e, ifMatch, names, nil)
	return a, buf, size, err
}

// prepareActionInto is prepareAction setting all of *a, in place: a
// transaction's actions are not copied on their way to the driver. keys,
// if not nil, carries the checked PartitionKey from one action to the
// next.
func prepareActionInto(a *driver.Action, buf []byte, typ ActionType, e *Entity, ifMatch ETag, names *entityenc.NameCache, keys *keyMemo) ([]byte, int, error) {
	if e == nil {
		*a = driver.Action{}
		return buf, 0, errNilEntity()
	}
	keySize, err := prepareKeysInto(a, typ, e.PartitionKey, e.RowKey, ifMatch, keys)
	if err != nil || typ == ActionDelete {
		return buf, keySize, err
	}
	start := len(buf)
	out, count, size, err := entityenc.AppendProperties(driver.AppendHeader(buf, 0), e.Properties, names)
	if err != nil {
		return out[:start], 0, coded(err)
	}
	size += keySize
	if err := entityenc.CheckLimits(count, size); err != nil {
		return out[:start], 0, coded(err)
	}
	return out, size, nil
}

// prepareRaw is prepareAction for a RawEntity: the If-Match rules and the
// keys, then the entity limits; it appends the record to buf.
func prepareRaw(buf []byte, typ ActionType, e *RawEntity, ifMatch ETag) (driver.Action, []byte, int, error) {
	var a driver.Action
	buf, size, err := prepareRawInto(&a, buf, typ, e, ifMatch, nil)
	return a, buf, size, err
}

// prepareRawInto is prepareRaw setting all of *a in place; keys is as
// prepareKeysInto's.
func prepareRawInto(a *driver.Action, buf []byte, typ ActionType, e *RawEntity, ifMatch ETag, keys *keyMemo) ([]byte, int, error) {
	keySize, err := prepareKeysInto(a, typ, e.PartitionKey, e.RowKey, ifMatch, keys)
	if err != nil || typ == ActionDelete {
		return buf, keySize, err
	}
	switch {
	case e.refused != nil:
		return buf, 0, e.refused
	case e.record == nil:
		return buf, 0, newError(edm.CodeInvalidInput, "the raw entity holds no entity")
	}
	size := keySize + e.size
	if err := entityenc.CheckLimits(e.count, size); err != nil {
		return buf, 0, coded(err)
	}
	return append(buf, e.record...), size, nil
}

// prepareKeysInto is the part of prepareActionInto before the
// properties: it sets all of *a and checks the If-Match rules of the type
// and the keys. It returns the keys' share of the entity size. keys, if
// not nil, remembers the PartitionKey checked last (see keyMemo).
func prepareKeysInto(a *driver.Action, typ ActionType, pk, rk string, ifMatch ETag, keys *keyMemo) (int, error) {
	*a = driver.Action{Type: typ, PartitionKey: pk, RowKey: rk, IfMatch: string(ifMatch)}
	switch typ {
	case ActionInsert, ActionUpsertMerge, ActionUpsertReplace:
		if ifMatch != "" {
			return 0, newError(edm.CodeInvalidInput, "%s takes no if-match", typ)
		}
	case ActionUpdateMerge, ActionUpdateReplace, ActionDelete:
		if ifMatch == "" {
			return 0, newError(edm.CodeInvalidInput, "%s requires an if-match etag (use ETagAny to match any)", typ)
		}
		if err := entityenc.CheckIfMatch(string(ifMatch)); err != nil {
			return 0, coded(err)
		}
		a.IfMatch = entityenc.NormalizeIfMatch(a.IfMatch)
	default:
		return 0, newError(edm.CodeInvalidInput, "unknown action type %d", uint8(typ))
	}
	pkUnits, err := keys.partitionKeyUnits(pk)
	if err != nil {
		return 0, coded(err)
	}
	rkUnits, err := entityenc.KeyUnits("RowKey", rk)
	if err != nil {
		return 0, coded(err)
	}
	return limits.KeysSize(pkUnits, rkUnits), nil
}

// keyMemo remembers the PartitionKey that passed entityenc.KeyUnits last
// and its UTF-16 length: the actions of a transaction share one, which
// is then checked once. The zero keyMemo remembers nothing; so does a nil
// *keyMemo, which never remembers.
type keyMemo struct {
	pk    string
	units int
	set   bool
}

// partitionKeyUnits returns entityenc.KeyUnits("PartitionKey", pk), from
// m when pk is the key m holds.
func (m *keyMemo) partitionKeyUnits(pk string) (int, error) {
	if m != nil && m.set && m.pk == pk {
		return m.units, nil
	}
	units, err := entityenc.KeyUnits("PartitionKey", pk)
	if err == nil && m != nil {
		*m = keyMemo{pk: pk, units: units, set: true}
	}
	return units, err
}

// txnScratch is the reusable memory of one write or transaction: the
// actions handed to the driver, one buffer holding every record, and the
// bookkeeping of a transaction's validation. It is pooled; nothing of it
// outlives the call to the driver's Commit.
type txnScratch struct {
	acts  []driver.Action
	buf   []byte
	ends  []int // end offset in buf of each action's record
	refs  []actionRef
	order []int32
	names entityenc.NameCache
	keys  keyMemo
	plan  structmap.Last
}

// actionRef is one action's entity as prepareTransaction resolved it.
type actionRef struct {
	pk, rk string
	e      *Entity       // the entity to encode, if not a struct
	raw    *RawEntity    // the entity already encoded
	st     structmap.Ref // the struct to encode, when st.Plan is set
	err    error         // why the action has no entity
}

// maxPooledBuf is the largest record buffer kept for reuse.
const maxPooledBuf = 1 << 20

var scratchPool = sync.Pool{New: func() any { return new(txnScratch) }}

func getScratch() *txnScratch { return scratchPool.Get().(*txnScratch) }

// putScratch returns s to the pool, dropping its references to the
// caller's memory.
func putScratch(s *txnScratch) {
	clear(s.acts)
	clear(s.refs)
	s.names = entityenc.NameCache{}
	s.keys = keyMemo{}
	s.plan = structmap.Last{}
	if cap(s.buf) > maxPooledBuf {
		s.buf = nil
	}
	scratchPool.Put(s)
}
