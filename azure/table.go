package azure

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/runtime"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/tablestore/tablestore/driver"
	"github.com/tablestore/tablestore/edm"
)

// table is the remote driver.Table: an aztables client for one table
// name. Azure matches the name case-insensitively.
type table struct {
	c      *conn
	name   string
	client *aztables.Client
	feed   feedState // ext_table.go
}

// Exists asks for at most one entity's keys: Azure has no cheaper way to
// learn that a table exists under a name matched case-insensitively.
func (t *table) Exists(ctx context.Context) error {
	if err := t.c.begin(ctx); err != nil {
		return err
	}
	defer t.c.end()
	one, keys := int32(1), "PartitionKey"
	_, err := t.client.NewListEntitiesPager(&aztables.ListEntitiesOptions{Top: &one, Select: &keys}).NextPage(ctx)
	return mapError(err, opEntity)
}

// Get ignores sel: Azure's point read takes no $select in aztables, and
// the caller projects.
func (t *table) Get(ctx context.Context, pk, rk string, sel []string) (driver.Row, error) {
	if err := t.c.begin(ctx); err != nil {
		return driver.Row{}, err
	}
	defer t.c.end()
	var raw *http.Response
	ctx, sdkPK := sdkPartitionKey(ctx, pk)
	resp, err := t.client.GetEntity(policy.WithCaptureResponse(ctx, &raw), sdkPK, rk, nil)
	if err != nil {
		return driver.Row{}, mapError(err, opEntity)
	}
	body, err := runtime.Payload(raw)
	if err != nil {
		return driver.Row{}, err
	}
	return decodeEntity(body, string(resp.ETag))
}

func (t *table) Commit(ctx context.Context, actions []driver.Action) (driver.CommitResult, error) {
	if err := t.c.begin(ctx); err != nil {
		return driver.CommitResult{}, err
	}
	defer t.c.end()
	bodies := make([][]byte, len(actions))
	size := 0
	for i, a := range actions {
		props := a.Properties
		if a.Record != nil {
			var err error
			if props, err = driver.Record(a.Record).Properties(); err != nil {
				return driver.CommitResult{}, fmt.Errorf("azure: the record of (%q, %q) does not decode: %w", a.PartitionKey, a.RowKey, err)
			}
		}
		var pk string
		ctx, pk = sdkPartitionKey(ctx, a.PartitionKey)
		b, err := entityJSON(pk, a.RowKey, props)
		if err != nil {
			return driver.CommitResult{}, err
		}
		bodies[i] = b
		size += len(b)
		if t.c.cosmos && len(actions) > 1 && size > cosmosBatchBytes {
			return driver.CommitResult{}, &driver.Error{Code: edm.CodeRequestBodyTooLarge, Index: i,
				Message: "the transaction's entities exceed cosmos db for table's 2 MiB batch limit"}
		}
	}
	if len(actions) == 1 {
		return t.commitOne(ctx, actions[0], bodies[0])
	}
	return t.commitBatch(ctx, actions, bodies)
}

// cosmosBatchBytes is Cosmos DB for Table's limit on a transaction's
// payload (Azure Table Storage allows 4 MiB, which the caller checks).
const cosmosBatchBytes = 2 << 20

// commitOne runs one action as Azure's single-entity operation.
func (t *table) commitOne(ctx context.Context, a driver.Action, body []byte) (driver.CommitResult, error) {
	var (
		etag azcore.ETag
		err  error
	)
	ifMatch := azcore.ETag(a.IfMatch)
	switch a.Type {
	case driver.ActionInsert:
		var r aztables.AddEntityResponse
		r, err = t.client.AddEntity(ctx, body, nil)
		etag = r.ETag
	case driver.ActionUpdateMerge, driver.ActionUpdateReplace:
		var r aztables.UpdateEntityResponse
		r, err = t.client.UpdateEntity(ctx, body, &aztables.UpdateEntityOptions{IfMatch: &ifMatch, UpdateMode: updateMode(a.Type)})
		etag = r.ETag
	case driver.ActionUpsertMerge, driver.ActionUpsertReplace:
		var r aztables.UpsertEntityResponse
		r, err = t.client.UpsertEntity(ctx, body, &aztables.UpsertEntityOptions{UpdateMode: updateMode(a.Type)})
		etag = r.ETag
	case driver.ActionDelete:
		ctx, pk := sdkPartitionKey(ctx, a.PartitionKey)
		_, err = t.client.DeleteEntity(ctx, pk, a.RowKey, &aztables.DeleteEntityOptions{IfMatch: &ifMatch})
	}
	if err != nil {
		return driver.CommitResult{}, mapError(err, opEntity)
	}
	return commitResult(string(etag)), nil
}

// commitResult derives the Timestamp from the ETag, which Azure's
// services make of it. An ETag of another form leaves the Timestamp zero.
func commitResult(etag string) driver.CommitResult {
	stamp, _ := timeOfETag(etag)
	return driver.CommitResult{Timestamp: stamp, ETag: etag}
}

func updateMode(a driver.ActionType) aztables.UpdateMode {
	if a == driver.ActionUpdateMerge || a == driver.ActionUpsertMerge {
		return aztables.UpdateModeMerge
	}
	return aztables.UpdateModeReplace
}

var transactionTypes = map[driver.ActionType]aztables.TransactionType{
	driver.ActionInsert:        aztables.TransactionTypeAdd,
	driver.ActionUpdateMerge:   aztables.TransactionTypeUpdateMerge,
	driver.ActionUpdateReplace: aztables.TransactionTypeUpdateReplace,
	driver.ActionUpsertMerge:   aztables.TransactionTypeInsertMerge,
	driver.ActionUpsertReplace: aztables.TransactionTypeInsertReplace,
	driver.ActionDelete:        aztables.TransactionTypeDelete,
}

// commitBatch runs the actions as one entity group transaction and reads
// the outcome from the multipart response (see batch.go).
func (t *table) commitBatch(ctx context.Context, actions []driver.Action, bodies [][]byte) (driver.CommitResult, error) {
	txn := make([]aztables.TransactionAction, len(actions))
	for i, a := range actions {
		txn[i] = aztables.TransactionAction{ActionType: transactionTypes[a.Type], Entity: bodies[i]}
		if a.IfMatch != "" {
			m := azcore.ETag(a.IfMatch)
			txn[i].IfMatch = &m
		}
	}
	var raw *http.Response
	_, err := t.client.SubmitTransaction(policy.WithCaptureResponse(withQuotedKeys(ctx, actions), &raw), txn, nil)
	var re *azcore.ResponseError
	if err != nil && !(errors.As(err, &re) && re.StatusCode == http.StatusAccepted) {
		de := mapError(err, opEntity)
		var e *driver.Error
		if errors.As(de, &e) {
			// A failure before any action ran may still name one.
			if i, msg, ok := indexPrefix(e.Message); ok {
				e.Index, e.Message = i, msg
			}
		}
		return driver.CommitResult{}, de
	}
	if raw == nil {
		return driver.CommitResult{}, errors.New("tablestore: azure: transaction: no response")
	}
	body, err := runtime.Payload(raw)
	if err != nil {
		return driver.CommitResult{}, err
	}
	out, err := parseBatchResponse(raw.Header.Get("Content-Type"), body)
	if err != nil {
		return driver.CommitResult{}, errors.New("tablestore: azure: transaction: " + err.Error())
	}
	if out.Err != nil {
		return driver.CommitResult{}, out.Err
	}
	var res driver.CommitResult
	for _, etag := range out.ETags {
		if etag != "" {
			res = commitResult(etag)
			break
		}
	}
	if len(out.ETags) == len(actions) {
		// Each entity's own version: Azure gives them all one, Azurite
		// one each.
		res.ETags = out.ETags
		res.Timestamps = make([]time.Time, len(actions))
		for i, etag := range out.ETags {
			res.Timestamps[i], _ = timeOfETag(etag)
		}
	}
	return res, nil
}

// QueryPage sends the printed filter, the $select (with the keys and
// Timestamp, which every row needs) and $top, and resumes from Azure's
// continuation pair, which the resume point carries (see position.go).
// The key ranges and residual are not used: Azure plans for itself.
func (t *table) QueryPage(ctx context.Context, q *driver.QueryRequest, emit func(driver.Row) error) (driver.PageResult, error) {
	if err := t.c.begin(ctx); err != nil {
		return driver.PageResult{}, err
	}
	defer t.c.end()
	top := int32(q.Top)
	opts := &aztables.ListEntitiesOptions{Top: &top}
	if f := queryFilter(q); f != "" {
		opts.Filter = &f
	}
	if q.Select != nil {
		s := selectList(q.Select)
		opts.Select = &s
	}
	if q.NextPartitionKey != "" || q.NextRowKey != "" {
		npk, err := decodePosition(q.NextPartitionKey)
		if err != nil {
			return driver.PageResult{}, err
		}
		nrk, err := decodePosition(q.NextRowKey)
		if err != nil {
			return driver.PageResult{}, err
		}
		opts.NextPartitionKey, opts.NextRowKey = &npk, &nrk
		if nrk == "" {
			opts.NextRowKey = nil
		}
	}
	var raw *http.Response
	page, err := t.client.NewListEntitiesPager(opts).NextPage(policy.WithCaptureResponse(ctx, &raw))
	if err != nil {
		return driver.PageResult{}, mapError(err, opEntity)
	}
	body, err := runtime.Payload(raw)
	if err != nil {
		return driver.PageResult{}, err
	}
	values, err := queryValues(body)
	if err != nil {
		return driver.PageResult{}, err
	}
	for _, v := range values {
		row, err := decodeEntity(v, "")
		if err != nil {
			return driver.PageResult{}, err
		}
		if err := emit(row); err != nil {
			return driver.PageResult{}, err
		}
	}
	var res driver.PageResult
	npk, nrk := deref(page.NextPartitionKey), deref(page.NextRowKey)
	if npk != "" || nrk != "" {
		res = driver.PageResult{More: true, NextPartitionKey: encodePosition(npk), NextRowKey: encodePosition(nrk)}
	}
	return res, nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// selectList is the $select Azure gets: the caller's names and the system
// properties, each once.
func selectList(sel []string) string {
	names := []string{"PartitionKey", "RowKey", "Timestamp"}
	for _, n := range sel {
		dup := false
		for _, m := range names {
			dup = dup || m == n
		}
		if !dup {
			names = append(names, n)
		}
	}
	return strings.Join(names, ",")
}
