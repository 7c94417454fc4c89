package tablestore

import (
	"cmp"
	"context"
	"slices"
	"strings"

	"github.com/tablestore/tablestore/driver"
	"github.com/tablestore/tablestore/edm"
	"github.com/tablestore/tablestore/internal/structmap"
)

// TransactionAction is one action of an entity group transaction.
type TransactionAction struct {
	Type ActionType
	// Entity is the entity to write: an *Entity, a *RawEntity or
	// StructEntity(v). For ActionDelete only its PartitionKey and RowKey
	// are read. On success the engine sets its Timestamp and ETag (a
	// struct's fields of those names when v is a pointer and has them).
	// A nil Entity, or a nil one of the three, fails with InvalidInput.
	Entity ActionEntity
	// IfMatch is required for updates and deletes (ETagAny allowed) and
	// must be empty for the other actions.
	IfMatch ETag
}

// ActionEntity is the entity of a TransactionAction, one of three forms
// that validate, fail and store alike:
//   - *Entity, whose property map is encoded;
//   - *RawEntity, the entity in its stored form, written as it is;
//   - StructEntity(v), a struct encoded field by field as InsertStruct
//     encodes it, without a property map.
//
// No other type implements it.
type ActionEntity interface{ actionEntity() }

func (*Entity) actionEntity()    {}
func (*RawEntity) actionEntity() {}

// StructEntity returns the ActionEntity for v, a struct or a pointer to
// one, mapped by the field rules of MarshalEntity: the action's
// validation, errors and stored bytes are those of an *Entity holding
// MarshalEntity's result. Any v is accepted here; the transaction fails
// at the action of a v that is not such a struct, with InvalidInput for
// nil or a nil pointer and otherwise MarshalEntity's error
// (InvalidValueType for a value that is not a struct). Each call
// allocates the small wrapper it returns.
func StructEntity(v any) ActionEntity { return &structEntity{v} }

// structEntity is the ActionEntity of a struct.
type structEntity struct{ v any }

func (*structEntity) actionEntity() {}

// Limits of one entity group transaction, as Azure's.
const (
	MaxTransactionActions = 100
	// MaxTransactionBytes is Azure's 4 MiB limit on a transaction's
	// request body. A transaction has no body here, so the limit is
	// applied to its data: the UTF-8 bytes of every action's keys, and of
	// its property names and String values, and the bytes of its Binary
	// values. Any JSON body carries at least those bytes, so a
	// transaction is refused only when no request body within Azure's
	// limit could hold it; a server checks its request body itself.
	MaxTransactionBytes = 4 << 20
)

// SubmitTransaction applies 1 to 100 actions on one partition of the table
// atomically and in order: either every action takes effect or none does.
// Every entity written gets the same new Timestamp and ETag (on a remote
// service that versions them one by one, as Azurite does, each its own).
//
// The whole transaction is validated before anything is read or written:
// the action count (InvalidInput), one PartitionKey
// (CommandsInBatchActOnDifferentPartitions at the first action with
// another key), each RowKey at most once (InvalidDuplicateRow at the
// repeat), the data size (RequestBodyTooLarge at the action whose data
// takes the transaction over MaxTransactionBytes), and each action as the single write would be. Then,
// under the partition's lock, each action's precondition is checked (the
// codes of Insert, Update, Upsert and Delete). A failure is a *BatchError
// whose Index is the 0-based index of the failing action (0 for a missing
// table or an empty transaction) and which unwraps to an *Error with
// Azure's code.
//
// Transactions on one partition serialize; on different partitions they
// run in parallel.
func (t *Table) SubmitTransaction(ctx context.Context, actions []TransactionAction) error {
	return t.submitTransaction(ctx, actions, driver.CommitOptions{})
}

// submitTransaction is SubmitTransaction with opts, and rootapi.API's
// SubmitTransaction: opts.DistinctTimestamps gives each entity written its
// own Timestamp and ETag, consecutive from the store's clock, as Cosmos DB
// for Table versions a batch's entities. A driver without
// driver.OptionCommitter fails it with NotImplemented.
func (t *Table) submitTransaction(ctx context.Context, actions []TransactionAction, opts driver.CommitOptions) error {
	oc, ok := t.drv.(driver.OptionCommitter)
	if opts.DistinctTimestamps && !ok {
		return newError(edm.CodeNotImplemented, "this store's driver cannot give a transaction's entities distinct Timestamps")
	}
	s := getScratch()
	defer putScratch(s)
	txn, err := s.prepareTransaction(actions)
	if err != nil {
		return err
	}
	var res driver.CommitResult
	if opts.DistinctTimestamps {
		res, err = oc.CommitWith(ctx, txn, opts)
	} else {
		res, err = t.drv.Commit(ctx, txn)
	}
	if err != nil {
		return mapError(err, true)
	}
	for i, a := range actions {
		if a.Type == ActionDelete {
			continue
		}
		ts, etag := res.Timestamp, res.ETag
		if len(res.ETags) == len(actions) && len(res.Timestamps) == len(actions) {
			ts, etag = res.Timestamps[i], res.ETags[i]
		}
		switch e := a.Entity.(type) {
		case *Entity:
			e.Timestamp, e.ETag = ts, ETag(etag)
		case *RawEntity:
			e.Timestamp, e.ETag = ts, ETag(etag)
		default:
			s.refs[i].st.SetVersion(ts, etag)
		}
	}
	return nil
}

// resolve fills r from a, reading the keys without validating anything;
// last is structmap.Resolve's.
func (r *actionRef) resolve(a *TransactionAction, last *structmap.Last) {
	*r = actionRef{}
	switch e := a.Entity.(type) {
	case *Entity:
		if e != nil {
			r.e, r.pk, r.rk = e, e.PartitionKey, e.RowKey
			return
		}
	case *RawEntity:
		if e != nil {
			r.raw, r.pk, r.rk = e, e.PartitionKey, e.RowKey
			return
		}
	case *structEntity:
		if e != nil && e.v != nil {
			r.resolveStruct(e.v, last)
			return
		}
	}
	r.err = newError(edm.CodeInvalidInput, "action has no entity")
}

// resolveStruct is resolve for the struct v.
func (r *actionRef) resolveStruct(v any, last *structmap.Last) {
	st, ok, err := structmap.Resolve(v, last)
	switch {
	case err != nil:
		r.err = coded(err)
	case ok:
		r.st = st
		r.pk, r.rk = st.Keys()
	default:
		if r.e, r.err = MarshalEntity(v); r.err == nil {
			r.pk, r.rk = r.e.PartitionKey, r.e.RowKey
		}
	}
}

// prepareTransaction validates a whole transaction into s; errors are
// *BatchError. Every record goes into one buffer.
func (s *txnScratch) prepareTransaction(actions []TransactionAction) ([]driver.Action, error) {
	switch {
	case len(actions) == 0:
		return nil, asBatchError(0, newError(edm.CodeInvalidInput, "a transaction needs at least one action"))
	case len(actions) > MaxTransactionActions:
		return nil, asBatchError(MaxTransactionActions, newError(edm.CodeInvalidInput,
			"the transaction has %d actions; the maximum is %d", len(actions), MaxTransactionActions))
	}
	n := len(actions)
	s.refs = slices.Grow(s.refs[:0], n)[:n]
	for i := range actions {
		s.refs[i].resolve(&actions[i], &s.plan)
	}
	repeat := s.firstRepeatedRow()
	s.acts = slices.Grow(s.acts[:0], n)[:n]
	s.ends = slices.Grow(s.ends[:0], n)[:n]
	buf := s.buf[:0]
	// size is the data counted against MaxTransactionBytes: an upper
	// bound (keys plus whole records) until it crosses the limit, exact
	// from then on.
	size, exact := 0, false
	for i := range actions {
		a, r := &actions[i], &s.refs[i]
		if r.err != nil {
			s.buf = buf
			return nil, asBatchError(i, r.err)
		}
		var (
			err     error
			encoded bool
		)
		da := &s.acts[i] // filled in place: an action is not copied
		start := len(buf)
		if r.st.Plan != nil {
			// A struct the direct encoding rejects is answered as its
			// MarshalEntity result would be, MarshalEntity's own errors
			// first.
			if buf, _, encoded = encodeStructInto(da, buf, a.Type, r.st, r.pk, r.rk, a.IfMatch, &s.keys); !encoded {
				buf = buf[:start]
				if r.e, err = MarshalEntity(a.Entity.(*structEntity).v); err != nil {
					s.buf = buf
					return nil, asBatchError(i, err)
				}
			}
		}
		if pk0 := s.refs[0].pk; r.pk != pk0 {
			s.buf = buf
			return nil, asBatchError(i, newError(edm.CodeCommandsInBatchActOnDifferentPartitions,
				"partition key %q differs from the transaction's %q", r.pk, pk0))
		}
		if i == repeat {
			s.buf = buf
			return nil, asBatchError(i, newError(edm.CodeInvalidDuplicateRow,
				"row key %q appears more than once in the transaction", r.rk))
		}
		switch {
		case r.raw != nil:
			buf, _, err = prepareRawInto(da, buf, a.Type, r.raw, a.IfMatch, &s.keys)
		case !encoded:
			buf, _, err = prepareActionInto(da, buf, a.Type, r.e, a.IfMatch, &s.names, &s.keys)
		}
		if err != nil {
			s.buf = buf
			return nil, asBatchError(i, err)
		}
		s.ends[i] = len(buf)
		if exact {
			size += len(r.pk) + len(r.rk) + recordData(buf[start:])
		} else if size += len(r.pk) + len(r.rk) + len(buf) - start; size > MaxTransactionBytes {
			size, exact = s.dataSize(buf, i), true
		}
		if size > MaxTransactionBytes {
			s.buf = buf
			return nil, asBatchError(i, newError(edm.CodeRequestBodyTooLarge,
				"the transaction's data exceeds %d bytes", MaxTransactionBytes))
		}
	}
	s.buf = buf
	start := 0
	for i := range s.acts {
		if end := s.ends[i]; end > start {
			s.acts[i].Record = buf[start:end:end]
			start = end
		}
	}
	return s.acts, nil
}

// dataSize returns the exact data (see MaxTransactionBytes) of actions 0
// to last, whose records end at s.ends in buf.
func (s *txnScratch) dataSize(buf []byte, last int) int {
	n, start := 0, 0
	for i := 0; i <= last; i++ {
		n += len(s.refs[i].pk) + len(s.refs[i].rk) + recordData(buf[start:s.ends[i]])
		start = s.ends[i]
	}
	return n
}

// recordData returns the bytes of a record's property names and String
// and Binary values; 0 for no record (a delete's).
func recordData(rec []byte) int {
	if len(rec) == 0 {
		return 0
	}
	n := 0
	it := driver.Record(rec).Iter()
	for it.Next() {
		n += len(it.Name())
		if v := it.Value(); v.Type == edm.TypeString || v.Type == edm.TypeBinary {
			n += len(v.Bytes)
		}
	}
	return n
}

// firstRepeatedRow returns the index of the first action, in action
// order, whose RowKey an earlier action has, or -1. Actions without an
// entity are left out: the transaction fails at them first. Keys already
// in increasing order, as bulk loads have them, need no sorting.
func (s *txnScratch) firstRepeatedRow() int {
	refs := s.refs
	increasing := true
	for i := range refs {
		if refs[i].err != nil || (i > 0 && refs[i].rk <= refs[i-1].rk) {
			increasing = false
			break
		}
	}
	if increasing {
		return -1
	}
	idx := s.order[:0]
	for i := range refs {
		if refs[i].err == nil {
			idx = append(idx, int32(i))
		}
	}
	s.order = idx
	slices.SortFunc(idx, func(a, b int32) int {
		if c := strings.Compare(refs[a].rk, refs[b].rk); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	repeat := -1
	for k := 1; k < len(idx); k++ {
		if i := int(idx[k]); refs[i].rk == refs[idx[k-1]].rk && (repeat < 0 || i < repeat) {
			repeat = i
		}
	}
	return repeat
}
