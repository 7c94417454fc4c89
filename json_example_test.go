package tablestore_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/tablestore/tablestore"
)

// Entities that arrive as Azure's JSON are stored without a property map,
// and pages are written as JSON straight from the store.
func ExampleRawEntity() {
	ctx := context.Background()
	db, err := tablestore.OpenInMemory(nil)
	if err != nil {
		panic(err)
	}
	defer db.Close()
	orders, err := db.CreateTable(ctx, "Orders")
	if err != nil {
		panic(err)
	}
	bodies := []string{
		`{"PartitionKey":"2026-11","RowKey":"0001","Total":12.5,"Items":3}`,
		`{"PartitionKey":"2026-11","RowKey":"0002","Total":99.0,"Items":1,"Big@odata.type":"Edm.Int64","Big":"9007199254740993"}`,
	}
	raws := make([]tablestore.RawEntity, len(bodies))
	actions := make([]tablestore.TransactionAction, len(bodies))
	for i, body := range bodies {
		if err := raws[i].UnmarshalJSON([]byte(body)); err != nil {
			panic(err)
		}
		actions[i] = tablestore.TransactionAction{Type: tablestore.ActionInsert, Entity: &raws[i]}
	}
	if err := orders.SubmitTransaction(ctx, actions); err != nil {
		panic(err)
	}

	page, _, err := orders.AppendPageJSON(ctx, []byte("["), tablestore.Query{Select: []string{"Total", "Big"}},
		&tablestore.JSONOptions{Metadata: tablestore.NoMetadata}, nil)
	if err != nil {
		panic(err)
	}
	// Timestamps vary from run to run: print the page without them.
	var rows []map[string]any
	if err := json.Unmarshal(append(page, ']'), &rows); err != nil {
		panic(err)
	}
	for _, r := range rows {
		fmt.Println(r["RowKey"], r["Total"], r["Big"])
	}
	// Output:
	// 0001 12.5 <nil>
	// 0002 99 9007199254740993
}
