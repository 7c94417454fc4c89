package tablestore

import "context"

// Table is a handle on one table. It is cheap, safe for concurrent use,
// and addresses the table by name: after DeleteTable and CreateTable of the
// same name, an old handle addresses the new table.
type Table struct {
	db   *DB
	name string
}

// Name returns the name the handle was made with.
func (t *Table) Name() string { return t.name }

// Insert adds a new entity. On success it sets e.Timestamp and e.ETag.
// Errors: EntityAlreadyExists, TableNotFound, and the validation codes
// (PropertiesNeedValue, OutOfRangeInput, KeyValueTooLarge, ...).
func (t *Table) Insert(ctx context.Context, e *Entity) error { panic("skeleton") }

// GetOptions adjust a Get.
type GetOptions struct {
	// Select lists the properties to return; nil returns all. The system
	// properties are always returned.
	Select []string
}

// Get reads one entity. Errors: ResourceNotFound, TableNotFound.
func (t *Table) Get(ctx context.Context, partitionKey, rowKey string, opts *GetOptions) (*Entity, error) {
	panic("skeleton")
}

// Update changes an existing entity if its ETag matches ifMatch (ETagAny
// matches any). On success it sets e.Timestamp and e.ETag.
// Errors: ResourceNotFound when absent, UpdateConditionNotSatisfied on an
// ETag mismatch, InvalidInput for an empty ifMatch, TableNotFound, and the
// validation codes.
func (t *Table) Update(ctx context.Context, e *Entity, mode UpdateMode, ifMatch ETag) error {
	panic("skeleton")
}

// Upsert inserts the entity, or updates it (Merge or Replace) if it exists.
// On success it sets e.Timestamp and e.ETag.
func (t *Table) Upsert(ctx context.Context, e *Entity, mode UpdateMode) error { panic("skeleton") }

// Delete removes an entity if its ETag matches ifMatch (ETagAny matches
// any). Errors: ResourceNotFound, UpdateConditionNotSatisfied,
// InvalidInput for an empty ifMatch, TableNotFound.
func (t *Table) Delete(ctx context.Context, partitionKey, rowKey string, ifMatch ETag) error {
	panic("skeleton")
}
