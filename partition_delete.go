package tablestore

import (
	"context"

	"github.com/tablestore/tablestore/driver"
	"github.com/tablestore/tablestore/internal/entityenc"
)

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
			return newError(CodeInvalidInput, "range start %q is after its end %q", fromRowKey, toRowKey)
		case fromRowKey == toRowKey:
			return mapError(p.t.drv.Exists(ctx), false)
		}
	}
	d, ok := p.t.drv.(driver.RangeDeleter)
	if !ok {
		return newError(CodeNotImplemented, "this store cannot delete a range of a partition")
	}
	_, err := d.DeleteRange(ctx, p.pk, fromRowKey, toRowKey)
	return mapError(err, false)
}
