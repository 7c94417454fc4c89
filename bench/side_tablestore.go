package main

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/tablestore/tablestore"
)

// benchTable is the table every tablestore workload uses.
const benchTable = "bench"

// tablestoreStore is the side under test: the public tablestore API, used
// the way an application would (entities as property maps, $filter
// strings, continuation tokens, ETags).
type tablestoreStore struct {
	db *tablestore.DB
	t  *tablestore.Table
}

func openTablestore(dir string, s storeSettings) (store, error) {
	db, err := tablestore.Open(filepath.Join(dir, "tablestore"), &tablestore.Options{
		NoSync:    !s.sync,
		CacheSize: s.cacheSize,
		BlockSize: s.blockSize,
	})
	if err != nil {
		return nil, err
	}
	t, err := db.CreateTable(context.Background(), benchTable)
	if errors.Is(err, tablestore.ErrTableAlreadyExists) {
		t, err = db.Table(benchTable), nil
	}
	if err != nil {
		db.Close()
		return nil, err
	}
	return &tablestoreStore{db: db, t: t}, nil
}

func (s *tablestoreStore) close() error { return s.db.Close() }

// recordEntity builds the tablestore entity of rec.
func recordEntity(rec *record) *tablestore.Entity {
	return &tablestore.Entity{
		PartitionKey: rec.PK,
		RowKey:       rec.RK,
		Properties: map[string]any{
			"Name":    rec.Name,
			"Email":   rec.Email,
			"City":    rec.City,
			"Note":    rec.Note,
			"Count":   rec.Count,
			"Bucket":  rec.Bucket,
			"Score":   rec.Score,
			"Amount":  rec.Amount,
			"Active":  rec.Active,
			"Created": ticksToTime(rec.Created),
		},
	}
}

func (s *tablestoreStore) upsertBatch(ctx context.Context, recs []record) error {
	actions := make([]tablestore.TransactionAction, len(recs))
	for i := range recs {
		actions[i] = tablestore.TransactionAction{Type: tablestore.ActionUpsertReplace, Entity: recordEntity(&recs[i])}
	}
	return s.t.SubmitTransaction(ctx, actions)
}

func (s *tablestoreStore) insert(ctx context.Context, rec *record) error {
	return s.t.Insert(ctx, recordEntity(rec))
}

func (s *tablestoreStore) get(ctx context.Context, pk, rk string) (int, error) {
	e, err := s.t.Get(ctx, pk, rk, nil)
	if errors.Is(err, tablestore.ErrResourceNotFound) {
		return 0, errNotFound
	}
	if err != nil {
		return 0, err
	}
	return len(e.Properties), nil
}

// count runs q to the end across pages and returns how many entities it
// returned; it checks each has every property.
func (s *tablestoreStore) count(ctx context.Context, q tablestore.Query) (int, error) {
	n := 0
	for e, err := range s.t.Query(ctx, q) {
		if err != nil {
			return n, err
		}
		if len(e.Properties) != propertyCount {
			return n, fmt.Errorf("bench: %s/%s has %d properties, want %d",
				e.PartitionKey, e.RowKey, len(e.Properties), propertyCount)
		}
		n++
	}
	return n, nil
}

func (s *tablestoreStore) rangeQuery(ctx context.Context, pk, lo, hi string) (int, error) {
	return s.count(ctx, tablestore.Query{Filter: fmt.Sprintf(
		"PartitionKey eq '%s' and RowKey ge '%s' and RowKey lt '%s'", pk, lo, hi)})
}

func (s *tablestoreStore) partitionScan(ctx context.Context, pk string) (int, error) {
	return s.count(ctx, tablestore.Query{Filter: fmt.Sprintf("PartitionKey eq '%s'", pk)})
}

func (s *tablestoreStore) filterScan(ctx context.Context, bucket int32) (int, error) {
	return s.count(ctx, tablestore.Query{Filter: fmt.Sprintf("Bucket eq %d", bucket)})
}

func (s *tablestoreStore) page(ctx context.Context, token string, top int) (int, string, error) {
	p, err := s.t.QueryPage(ctx, tablestore.Query{Top: top, Continuation: token})
	if err != nil {
		return 0, "", err
	}
	return len(p.Entities), p.Continuation, nil
}

func (s *tablestoreStore) readModifyWrite(ctx context.Context, pk, rk string) error {
	e, err := s.t.Get(ctx, pk, rk, nil)
	if err != nil {
		return err
	}
	c, ok := e.Properties["Count"].(int32)
	if !ok {
		return fmt.Errorf("bench: Count of %s/%s is %T", pk, rk, e.Properties["Count"])
	}
	e.Properties["Count"] = c + 1
	err = s.t.Update(ctx, e, tablestore.Replace, e.ETag)
	if errors.Is(err, tablestore.ErrUpdateConditionNotSatisfied) {
		return errConflict
	}
	return err
}

// scanAllProgress reads every entity of the table through the query
// iterator without keeping them, for the heap measurement.
func (s *tablestoreStore) scanAllProgress(ctx context.Context, p *progress) (int, error) {
	n := 0
	for e, err := range s.t.Query(ctx, tablestore.Query{}) {
		if err != nil {
			return n, err
		}
		if len(e.Properties) != propertyCount {
			return n, fmt.Errorf("bench: %s/%s has %d properties", e.PartitionKey, e.RowKey, len(e.Properties))
		}
		n++
		if n%1000 == 0 {
			p.add(1000)
		}
	}
	return n, nil
}

func (s *tablestoreStore) readCount(ctx context.Context, pk, rk string) (int32, error) {
	e, err := s.t.Get(ctx, pk, rk, nil)
	if err != nil {
		return 0, err
	}
	c, ok := e.Properties["Count"].(int32)
	if !ok {
		return 0, fmt.Errorf("bench: Count of %s/%s is %T", pk, rk, e.Properties["Count"])
	}
	return c, nil
}
