package tablestore_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/tablestore/tablestore"
)

// Entities that arrive as Azure's JSON are stored without a property map,
// and written back as Azure's JSON at the metadata level a client asks
// for.
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
	batch := orders.NewBatch()
	for i, body := range bodies {
		if err := raws[i].UnmarshalJSON([]byte(body)); err != nil {
			panic(err)
		}
		batch.Insert(&raws[i])
	}
	if err := batch.Submit(ctx); err != nil {
		panic(err)
	}

	page := []byte("[")
	opts := &tablestore.JSONOptions{Metadata: tablestore.NoMetadata}
	for e, err := range orders.Query(ctx, tablestore.Query{Select: []string{"Total", "Big"}}) {
		if err != nil {
			panic(err)
		}
		if len(page) > 1 {
			page = append(page, ',')
		}
		if page, err = tablestore.AppendEntityJSON(page, e, opts); err != nil {
			panic(err)
		}
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
