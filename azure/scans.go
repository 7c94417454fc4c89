package azure

import (
	"context"
	"encoding/json"
	"net/url"
	"strconv"
	"strings"

	"github.com/tablestore/tablestore/driver"
	"github.com/tablestore/tablestore/edm"
	"github.com/tablestore/tablestore/filter"
)

// Reverse reads and segments go through tablestore's server, when its
// capability document offers them ("reverseQuery", "segments"); Azure,
// Azurite and Cosmos DB answer NotImplemented.

var (
	_ driver.ReverseQuerier = (*table)(nil)
	_ driver.Segmenter      = (*table)(nil)
)

// reverseMark starts the resume point of a reverse read: the server's
// continuation token follows it.
const reverseMark = "r:"

// QueryPageReverse reads a page in descending key order through the
// server's query endpoint (reverse=true), restricted to q.Within. The
// resume point carries the server's continuation token.
func (t *table) QueryPageReverse(ctx context.Context, q *driver.QueryRequest, emit func(driver.Row) error) (driver.PageResult, error) {
	if err := t.c.ext.requireFeature(ctx, "reverseQuery"); err != nil {
		return driver.PageResult{}, err
	}
	if err := t.c.begin(ctx); err != nil {
		return driver.PageResult{}, err
	}
	defer t.c.end()
	v := url.Values{"reverse": {"true"}}
	if f := queryFilter(q); f != "" {
		v.Set("$filter", f)
	}
	if q.Select != nil {
		v.Set("$select", selectList(q.Select))
	}
	if q.Top > 0 {
		v.Set("$top", strconv.Itoa(q.Top))
	}
	if q.NextPartitionKey != "" {
		tok, ok := strings.CutPrefix(q.NextPartitionKey, reverseMark)
		if !ok {
			return driver.PageResult{}, &driver.Error{Code: edm.CodeInvalidInput, Message: "the continuation is not of a reverse read through tablestore's server"}
		}
		v.Set("continuation", tok)
	}
	next, err := t.extQueryPage(ctx, v, emit)
	if err != nil {
		return driver.PageResult{}, err
	}
	var res driver.PageResult
	if next != "" {
		res.More, res.NextPartitionKey = true, reverseMark+next
	}
	return res, nil
}

// extQueryPage reads one page of the server's extension query endpoint
// with parameters v, emitting its rows in order, and returns the
// server's continuation ("" on the last page).
func (t *table) extQueryPage(ctx context.Context, v url.Values, emit func(driver.Row) error) (string, error) {
	var page struct {
		Value        []json.RawMessage `json:"value"`
		Continuation string            `json:"continuation"`
	}
	if err := t.c.ext.call(ctx, "GET", tablePath(t.name, "query"), v, nil, &page); err != nil {
		return "", err
	}
	for _, raw := range page.Value {
		row, err := decodeEntity(raw, "")
		if err != nil {
			return "", err
		}
		if err := emit(row); err != nil {
			return "", err
		}
	}
	return page.Continuation, nil
}

// Segments asks the server for the table's split positions.
func (t *table) Segments(ctx context.Context, n int) ([]driver.Key, error) {
	if err := t.c.ext.requireFeature(ctx, "segments"); err != nil {
		return nil, err
	}
	if err := t.c.begin(ctx); err != nil {
		return nil, err
	}
	defer t.c.end()
	var out struct {
		Splits []struct {
			PK string `json:"pk"`
			RK string `json:"rk"`
		} `json:"splits"`
	}
	if err := t.c.ext.call(ctx, "GET", tablePath(t.name, "segments"), url.Values{"n": {strconv.Itoa(n)}}, nil, &out); err != nil {
		return nil, err
	}
	keys := make([]driver.Key, len(out.Splits))
	for i, s := range out.Splits {
		keys[i] = driver.Key{PartitionKey: s.PK, RowKey: s.RK}
	}
	return keys, nil
}

// queryFilter returns the $filter to send for q: its filter, and the
// bounds of q.Within when the query is restricted to a segment (the
// service plans from the filter alone). "" for none.
func queryFilter(q *driver.QueryRequest) string {
	var parts []string
	if q.Filter != nil {
		parts = append(parts, filter.Format(q.Filter))
	}
	if r := q.Within; r != nil {
		if s := r.Start; s != (driver.Key{}) {
			parts = append(parts, keyBound("gt", "ge", s))
		}
		if !r.Unbounded {
			parts = append(parts, keyBound("lt", "lt", r.End))
		}
	}
	switch len(parts) {
	case 0:
		return ""
	case 1:
		return parts[0]
	}
	return "(" + strings.Join(parts, ") and (") + ")"
}

// keyBound is the condition that an entity's key compares with k: op on
// the PartitionKey, or the same PartitionKey and rowOp on the RowKey
// (gt/ge for a start, lt/lt for an end).
func keyBound(op, rowOp string, k driver.Key) string {
	pk := quote(k.PartitionKey)
	if k.RowKey == "" {
		if rowOp == "ge" {
			return "PartitionKey ge " + pk
		}
		return "PartitionKey " + op + " " + pk
	}
	return "PartitionKey " + op + " " + pk + " or (PartitionKey eq " + pk + " and RowKey " + rowOp + " " + quote(k.RowKey) + ")"
}

func quote(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }
