package main

// YCSB over HTTP: the same workloads through aztables against
// tablestore's server and Azurite.

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
)

// ycsbHTTP is a ycsbStore over aztables: one partition, the YCSB key as
// RowKey, an update a Merge of one property, a scan one query of
// RowKey ge key with $top.
type ycsbHTTP struct {
	ctx    context.Context
	client *aztables.Client
}

// newYCSBHTTP connects to the server at connStr with a connection pool
// that keeps up to 64 idle connections, so 16 threads reuse theirs, and
// creates the table.
func newYCSBHTTP(ctx context.Context, connStr string) (*ycsbHTTP, error) {
	hc := &http.Client{Transport: &http.Transport{MaxIdleConns: 64, MaxIdleConnsPerHost: 64}}
	opts := &aztables.ClientOptions{ClientOptions: azcore.ClientOptions{Transport: hc, Retry: policy.RetryOptions{MaxRetries: -1}}}
	svc, err := aztables.NewServiceClientFromConnectionString(connStr, opts)
	if err != nil {
		return nil, err
	}
	c := svc.NewClient("usertable")
	if _, err := c.CreateTable(ctx, nil); err != nil {
		return nil, err
	}
	return &ycsbHTTP{ctx: ctx, client: c}, nil
}

func ycsbJSON(key string, fields [][]byte, only int) ([]byte, error) {
	e := map[string]any{"PartitionKey": ycsbPartition, "RowKey": key}
	for i, f := range fields {
		if only < 0 || i == only {
			e[ycsbFieldNames[i]] = string(f)
		}
	}
	return json.Marshal(e)
}

func (h *ycsbHTTP) load(keys []string, recs [][][]byte) error {
	actions := make([]aztables.TransactionAction, len(keys))
	for i := range keys {
		b, err := ycsbJSON(keys[i], recs[i], -1)
		if err != nil {
			return err
		}
		actions[i] = aztables.TransactionAction{ActionType: aztables.TransactionTypeAdd, Entity: b}
	}
	_, err := h.client.SubmitTransaction(h.ctx, actions, nil)
	return err
}

func (h *ycsbHTTP) insert(key string, fields [][]byte) error {
	b, err := ycsbJSON(key, fields, -1)
	if err != nil {
		return err
	}
	_, err = h.client.AddEntity(h.ctx, b, nil)
	return err
}

func (h *ycsbHTTP) read(key string) (int, error) {
	r, err := h.client.GetEntity(h.ctx, ycsbPartition, key, nil)
	if err != nil {
		return 0, err
	}
	var e map[string]any
	if err := json.Unmarshal(r.Value, &e); err != nil {
		return 0, err
	}
	return countFields(e), nil
}

// countFields counts the YCSB fields of a decoded entity.
func countFields(e map[string]any) int {
	n := 0
	for _, name := range ycsbFieldNames {
		if _, ok := e[name].(string); ok {
			n++
		}
	}
	return n
}

func (h *ycsbHTTP) update(key string, field int, val []byte) error {
	fields := make([][]byte, ycsbFieldCount)
	fields[field] = val
	b, err := ycsbJSON(key, fields, field)
	if err != nil {
		return err
	}
	_, err = h.client.UpdateEntity(h.ctx, b, &aztables.UpdateEntityOptions{UpdateMode: aztables.UpdateModeMerge})
	return err
}

func (h *ycsbHTTP) scan(key string, n int) (int, error) {
	filter := "PartitionKey eq '" + ycsbPartition + "' and RowKey ge '" + key + "'"
	top := int32(n)
	p := h.client.NewListEntitiesPager(&aztables.ListEntitiesOptions{Filter: &filter, Top: &top})
	got := 0
	for got < n && p.More() {
		page, err := p.NextPage(h.ctx)
		if err != nil {
			return got, err
		}
		for _, raw := range page.Entities {
			if got == n {
				break
			}
			var e map[string]any
			if err := json.Unmarshal(raw, &e); err != nil {
				return got, err
			}
			if c := countFields(e); c != ycsbFieldCount {
				return got, fmt.Errorf("bench: scan read %d fields", c)
			}
			got++
		}
	}
	return got, nil
}

func (h *ycsbHTTP) close() error { return nil }
