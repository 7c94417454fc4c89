package tablestore

import (
	"context"
	"iter"

	"github.com/tablestore/tablestore/driver"
	"github.com/tablestore/tablestore/edm"
	"github.com/tablestore/tablestore/filter"
	"github.com/tablestore/tablestore/internal/entityenc"
	"github.com/tablestore/tablestore/internal/structmap"
)

// Partition is a view of one PartitionKey of a table: the unit of Azure's
// entity group transactions and of this store's write locking. It is
// cheap, safe for concurrent use, and addresses the table by name like
// its Table.
//
// Its writes are the Table's writes, of any ActionEntity, with the
// PartitionKey filled in: an entity whose PartitionKey is "" gets the
// partition's (the field is set on the caller's entity, or struct when
// passed by pointer), and one whose PartitionKey names another
// partition is rejected with InvalidInput (CommandsInBatchActOnDifferentPartitions
// in a batch) before anything is read or written. Its queries read
// nothing outside the partition.
//
// The empty partition key is valid, as on Azure. An invalid one (too
// long, or holding a forbidden character) makes every operation fail with the key codes of
// Table.Insert.
type Partition struct {
	t  *Table
	pk string
}

// Partition returns the view of the table's partition pk. It does no I/O.
func (t *Table) Partition(pk string) *Partition { return &Partition{t: t, pk: pk} }

// Table returns the partition's table.
func (p *Partition) Table() *Table { return p.t }

// Key returns the partition's PartitionKey.
func (p *Partition) Key() string { return p.pk }

// Get reads the partition's entity rowKey; see Table.Get.
func (p *Partition) Get(ctx context.Context, rowKey string, opts *GetOptions) (*Entity, error) {
	return p.t.Get(ctx, p.pk, rowKey, opts)
}

// Insert adds a new entity to the partition; see Table.Insert (and
// Table.InsertStruct for StructEntity(v)).
func (p *Partition) Insert(ctx context.Context, e ActionEntity) error {
	return p.write(ctx, ActionInsert, e, "")
}

// Update changes an existing entity of the partition; see Table.Update.
func (p *Partition) Update(ctx context.Context, e ActionEntity, mode UpdateMode, ifMatch ETag) error {
	typ, err := modeAction(mode, ActionUpdateMerge, ActionUpdateReplace)
	if err != nil {
		return err
	}
	return p.write(ctx, typ, e, ifMatch)
}

// Upsert inserts or updates an entity of the partition; see Table.Upsert.
func (p *Partition) Upsert(ctx context.Context, e ActionEntity, mode UpdateMode) error {
	typ, err := modeAction(mode, ActionUpsertMerge, ActionUpsertReplace)
	if err != nil {
		return err
	}
	return p.write(ctx, typ, e, "")
}

// Delete removes the partition's entity rowKey; see Table.Delete.
func (p *Partition) Delete(ctx context.Context, rowKey string, ifMatch ETag) error {
	return p.t.Delete(ctx, p.pk, rowKey, ifMatch)
}

// write is the table's write of e after own.
func (p *Partition) write(ctx context.Context, typ ActionType, e ActionEntity, ifMatch ETag) error {
	if pk, ok := p.own(e); ok && pk != p.pk {
		return newError(edm.CodeInvalidInput, "partition key %q differs from the partition's %q", pk, p.pk)
	}
	return p.t.writeEntity(ctx, typ, e, ifMatch)
}

// fill sets *pk to the partition's key when it is empty and returns it.
func (p *Partition) fill(pk *string) string {
	if *pk == "" {
		*pk = p.pk
	}
	return *pk
}

// own gives e the partition's key when its PartitionKey is empty (an
// entity's field is set, and so is the PartitionKey field of a struct
// passed by pointer; a struct passed by value is replaced by a copy
// holding it) and returns e's PartitionKey. It reports false, changing
// nothing, for an entity whose keys the write itself must reject: nil, or
// a struct the field rules refuse.
func (p *Partition) own(e ActionEntity) (string, bool) {
	switch e := e.(type) {
	case *Entity:
		if e == nil {
			return "", false
		}
		return p.fill(&e.PartitionKey), true
	case *RawEntity:
		if e == nil {
			return "", false
		}
		return p.fill(&e.PartitionKey), true
	case *structEntity:
		if e == nil {
			return "", false
		}
		r, ok, err := structmap.Resolve(e.v, nil)
		if !ok || err != nil {
			return "", false
		}
		pk, _ := r.Keys()
		if pk == "" && r.SetPartitionKey(p.pk) {
			pk = p.pk
			if !r.Owned {
				e.v = r.Pointer() // the copy holding the key
			}
		}
		return pk, true
	}
	return "", false
}

// QueryPage reads one page of the entities of the partition matching
// q.Filter; see Table.QueryPage. The filter is combined with
// `PartitionKey eq <key>`, so the plan is never wider than a partition
// scan.
func (p *Partition) QueryPage(ctx context.Context, q Query) (*Page, error) {
	pq, err := p.t.prepareIn(ctx, q, p)
	if err != nil {
		return nil, err
	}
	return p.t.readPage(ctx, pq)
}

// Query iterates over the entities of the partition matching q; see
// Table.Query.
func (p *Partition) Query(ctx context.Context, q Query) iter.Seq2[*Entity, error] {
	return p.t.query(ctx, q, p)
}

// Plan returns how q would run on the partition; see Table.Plan.
func (p *Partition) Plan(ctx context.Context, q Query) (*QueryPlan, error) {
	return p.t.plan(ctx, q, p)
}

// restrict returns f and-ed with `PartitionKey eq <key>`, as a node and
// as text, after checking the key.
func (p *Partition) restrict(f filter.Node, text string) (filter.Node, string, error) {
	if err := entityenc.ValidateKey("PartitionKey", p.pk); err != nil {
		return nil, "", coded(err)
	}
	eq := &filter.CompareNode{Property: "PartitionKey", Op: filter.OpEQ,
		Value: edm.Value{Type: edm.TypeString, Bytes: []byte(p.pk)}}
	cond := filter.Format(eq)
	if f == nil {
		return eq, cond, nil
	}
	return &filter.AndNode{X: eq, Y: f}, cond + " and (" + text + ")", nil
}

// DeleteAll deletes every entity of the partition; see DeleteRange.
func (p *Partition) DeleteAll(ctx context.Context) error {
	return p.DeleteRange(ctx, "", "")
}

// DeleteRange deletes the entities of the partition whose RowKey lies in
// the half-open range [fromRowKey, toRowKey). "" leaves a side unbounded:
// ("", "") is the whole partition, ("", "m") every RowKey before "m".
// Deleting nothing is not an error, and neither is fromRowKey equal to
// toRowKey (an empty range).
//
// On the embedded engine it is one range deletion: constant time however
// many entities the range holds, atomic with respect to writes and
// transactions on the partition (each falls wholly before or after it;
// a query page sees all of it or none), and durable like any write
// (synced unless Options.NoSync). The space comes back as compaction
// drops the deleted entities.
//
// Azure has no such operation: its design guide deletes entity by entity,
// or drops a whole table per time period. A driver over a remote Azure
// store can only query the range and delete what it finds in transactions
// of up to 100 entities, which is neither constant time nor atomic:
// concurrent writers can add entities behind it, readers can see it half
// done, and an error leaves it half done. A driver that cannot delete
// ranges at all makes it fail with NotImplemented.
//
// Errors: the key codes of Table.Insert for the partition key or a
// non-empty bound, InvalidInput when fromRowKey > toRowKey (both set),
// TableNotFound, ErrClosed, ctx's error.
func (p *Partition) DeleteRange(ctx context.Context, fromRowKey, toRowKey string) error {
	if err := p.t.db.checkContext(ctx); err != nil {
		return err
	}
	if err := entityenc.ValidateKey("PartitionKey", p.pk); err != nil {
		return coded(err)
	}
	for _, k := range [2]string{fromRowKey, toRowKey} {
		if k == "" {
			continue
		}
		if err := entityenc.ValidateKey("RowKey", k); err != nil {
			return coded(err)
		}
	}
	if fromRowKey != "" && toRowKey != "" {
		switch {
		case fromRowKey > toRowKey:
			return newError(edm.CodeInvalidInput, "range start %q is after its end %q", fromRowKey, toRowKey)
		case fromRowKey == toRowKey:
			return mapError(p.t.drv.Exists(ctx), false)
		}
	}
	d, ok := p.t.drv.(driver.RangeDeleter)
	if !ok {
		return newError(edm.CodeNotImplemented, "this store cannot delete a range of a partition")
	}
	_, err := d.DeleteRange(ctx, p.pk, fromRowKey, toRowKey)
	return mapError(err, false)
}
