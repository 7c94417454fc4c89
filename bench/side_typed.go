package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/tablestore/tablestore"
)

// typedStore is tablestore through its typed API: structs read with
// GetStruct, QueryStructs and QueryStructPage and written with InsertStruct,
// UpdateStruct and transactions of struct actions, no property maps.
type typedStore struct {
	*tablestoreStore
}

// typedRow is record in the struct mapping.
type typedRow struct {
	PartitionKey, RowKey string
	ETag                 tablestore.ETag
	Name, Email          string
	City, Note           string
	Count, Bucket        int32
	Score                int64
	Amount               float64
	Active               bool
	Created              time.Time
}

// fields counts the properties a read filled, as the map side counts
// its map's entries. The numbers and the boolean may hold zero values, so
// only the strings and the DateTime, never empty in the data set, are
// checked.
func (r *typedRow) fields() int {
	n := 5 // Count, Bucket, Score, Amount, Active: not checked
	for _, set := range []bool{r.Name != "", r.Email != "", r.City != "", r.Note != ""} {
		if set {
			n++
		}
	}
	if !r.Created.IsZero() {
		n++
	}
	return n
}

func openTyped(dir string, s storeSettings) (store, error) {
	ts, err := openTablestore(dir, s)
	if err != nil {
		return nil, err
	}
	return &typedStore{ts.(*tablestoreStore)}, nil
}

func typedOf(rec *record) *typedRow {
	return &typedRow{PartitionKey: rec.PK, RowKey: rec.RK, Name: rec.Name, Email: rec.Email, City: rec.City,
		Note: rec.Note, Count: rec.Count, Bucket: rec.Bucket, Score: rec.Score, Amount: rec.Amount,
		Active: rec.Active, Created: ticksToTime(rec.Created)}
}

// typedActions returns upserts (replace) of recs as struct actions.
func typedActions(recs []record) []tablestore.TransactionAction {
	actions := make([]tablestore.TransactionAction, len(recs))
	for i := range recs {
		actions[i] = tablestore.TransactionAction{Type: tablestore.ActionUpsertReplace, Entity: tablestore.StructEntity(typedOf(&recs[i]))}
	}
	return actions
}

func (s *typedStore) upsertBatch(ctx context.Context, recs []record) error {
	return s.t.SubmitTransaction(ctx, typedActions(recs))
}

func (s *typedStore) prepareBatch(ctx context.Context, recs []record) func() error {
	actions := typedActions(recs)
	return func() error { return s.t.SubmitTransaction(ctx, actions) }
}

func (s *typedStore) insert(ctx context.Context, rec *record) error {
	return s.t.InsertStruct(ctx, typedOf(rec))
}

func (s *typedStore) get(ctx context.Context, pk, rk string) (int, error) {
	r, err := tablestore.GetStruct[typedRow](ctx, s.t, pk, rk, nil)
	if errors.Is(err, tablestore.ErrResourceNotFound) {
		return 0, errNotFound
	}
	if err != nil {
		return 0, err
	}
	return r.fields(), nil
}

// count runs q to the end across pages, checking each entity is whole.
func (s *typedStore) count(ctx context.Context, q tablestore.Query) (int, error) {
	n := 0
	for r, err := range tablestore.QueryStructs[typedRow](ctx, s.t, q) {
		if err != nil {
			return n, err
		}
		if r.fields() != propertyCount {
			return n, fmt.Errorf("bench: %s/%s has %d properties set, want %d", r.PartitionKey, r.RowKey, r.fields(), propertyCount)
		}
		n++
	}
	return n, nil
}

func (s *typedStore) rangeQuery(ctx context.Context, pk, lo, hi string) (int, error) {
	return s.count(ctx, tablestore.Query{Filter: fmt.Sprintf(
		"PartitionKey eq '%s' and RowKey ge '%s' and RowKey lt '%s'", pk, lo, hi)})
}

func (s *typedStore) partitionScan(ctx context.Context, pk string) (int, error) {
	return s.count(ctx, tablestore.Query{Filter: fmt.Sprintf("PartitionKey eq '%s'", pk)})
}

func (s *typedStore) filterScan(ctx context.Context, bucket int32) (int, error) {
	return s.count(ctx, tablestore.Query{Filter: fmt.Sprintf("Bucket eq %d", bucket)})
}

func (s *typedStore) page(ctx context.Context, token string, top int) (int, string, error) {
	p, err := tablestore.QueryStructPage[typedRow](ctx, s.t, tablestore.Query{Top: top, Continuation: token})
	if err != nil {
		return 0, "", err
	}
	return len(p.Entities), p.Continuation, nil
}

func (s *typedStore) readModifyWrite(ctx context.Context, pk, rk string) error {
	r, err := tablestore.GetStruct[typedRow](ctx, s.t, pk, rk, nil)
	if err != nil {
		return err
	}
	r.Count++
	err = s.t.UpdateStruct(ctx, &r, tablestore.Replace, r.ETag)
	if errors.Is(err, tablestore.ErrUpdateConditionNotSatisfied) {
		return errConflict
	}
	return err
}

func (s *typedStore) readCount(ctx context.Context, pk, rk string) (int32, error) {
	r, err := tablestore.GetStruct[typedRow](ctx, s.t, pk, rk, nil)
	return r.Count, err
}
