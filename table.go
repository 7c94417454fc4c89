package tablestore

import (
	"context"

	"github.com/tablestore/tablestore/driver"
)

// Table is a handle on one table. It is cheap, safe for concurrent use,
// and addresses the table by name: after DeleteTable and CreateTable of the
// same name, an old handle addresses the new table.
//
// Every write validates its input completely before it reads or writes
// anything, so a rejected write changes nothing. Writes to one partition
// are serialized; reads take no lock and see only committed writes.
type Table struct {
	db   *DB
	name string
	drv  driver.Table
}

// Name returns the name the handle was made with.
func (t *Table) Name() string { return t.name }

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
	sel, err := t.checkGet(ctx, partitionKey, rowKey, opts)
	if err != nil {
		return nil, err
	}
	r, err := t.drv.Get(ctx, partitionKey, rowKey, sel)
	if err != nil {
		return nil, mapError(err, false)
	}
	return decodeRow(r, sel, true) // errors already name the entity
}

// checkGet validates a Get's arguments and returns its projection.
func (t *Table) checkGet(ctx context.Context, partitionKey, rowKey string, opts *GetOptions) ([]string, error) {
	if err := t.db.checkContext(ctx); err != nil {
		return nil, err
	}
	if err := validateKey("PartitionKey", partitionKey); err != nil {
		return nil, err
	}
	if err := validateKey("RowKey", rowKey); err != nil {
		return nil, err
	}
	if opts != nil && opts.Select != nil {
		if err := validateSelect(opts.Select); err != nil {
			return nil, err
		}
		return opts.Select, nil
	}
	return nil, nil
}
