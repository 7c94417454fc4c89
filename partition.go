package tablestore

import (
	"context"
	"iter"

	"github.com/tablestore/tablestore/driver"
	"github.com/tablestore/tablestore/edm"
	"github.com/tablestore/tablestore/filter"
	"github.com/tablestore/tablestore/internal/entityenc"
)

// Partition is a view of one PartitionKey of a table: the unit of Azure's
// entity group transactions and of this store's write locking. It is
// cheap, safe for concurrent use, and addresses the table by name like
// its Table.
//
// Its writes are the Table's writes with the PartitionKey filled in: an
// entity whose PartitionKey is "" gets the partition's (the field is set
// on the caller's entity), and one whose PartitionKey names another
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

// Table returns the partition's table.
func (p *Partition) Table() *Table { return p.t }

// Key returns the partition's PartitionKey.
func (p *Partition) Key() string { return p.pk }

// Get reads the partition's entity rowKey; see Table.Get.
func (p *Partition) Get(ctx context.Context, rowKey string, opts *GetOptions) (*Entity, error) {
	return p.t.Get(ctx, p.pk, rowKey, opts)
}

// Insert adds a new entity to the partition; see Table.Insert.
func (p *Partition) Insert(ctx context.Context, e *Entity) error {
	if err := p.own(e); err != nil {
		return err
	}
	return p.t.Insert(ctx, e)
}

// Update changes an existing entity of the partition; see Table.Update.
func (p *Partition) Update(ctx context.Context, e *Entity, mode UpdateMode, ifMatch ETag) error {
	if err := p.own(e); err != nil {
		return err
	}
	return p.t.Update(ctx, e, mode, ifMatch)
}

// Upsert inserts or updates an entity of the partition; see Table.Upsert.
func (p *Partition) Upsert(ctx context.Context, e *Entity, mode UpdateMode) error {
	if err := p.own(e); err != nil {
		return err
	}
	return p.t.Upsert(ctx, e, mode)
}

// Delete removes the partition's entity rowKey; see Table.Delete.
func (p *Partition) Delete(ctx context.Context, rowKey string, ifMatch ETag) error {
	return p.t.Delete(ctx, p.pk, rowKey, ifMatch)
}

// own fills in an entity's empty PartitionKey with the partition's, and
// rejects one naming another partition. A nil entity is left to the
// write's own check.
func (p *Partition) own(e *Entity) error {
	if e == nil {
		return nil
	}
	if e.PartitionKey == "" {
		e.PartitionKey = p.pk
	}
	if e.PartitionKey != p.pk {
		return newError(edm.CodeInvalidInput, "partition key %q differs from the partition's %q", e.PartitionKey, p.pk)
	}
	return nil
}

// NewBatch starts an empty entity group transaction on the partition. Its
// actions may leave PartitionKey "" (Batch.Delete takes "" too); one
// naming another partition makes Submit fail with a *BatchError at that
// action, code CommandsInBatchActOnDifferentPartitions.
func (p *Partition) NewBatch() *Batch { return &Batch{table: p.t, partition: p} }

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
