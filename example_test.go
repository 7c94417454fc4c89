package tablestore_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/tablestore/tablestore"
)

// A store lives in a directory: what was committed before Close is there
// when the directory is opened again.
func ExampleOpen() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "tablestore-example-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)

	db, err := tablestore.Open(dir, nil) // nil options: defaults, every commit synced
	if err != nil {
		panic(err)
	}
	people, err := db.CreateTable(ctx, "People")
	if err != nil {
		panic(err)
	}
	err = people.Insert(ctx, &tablestore.Entity{PartitionKey: "Sales", RowKey: "0042",
		Properties: map[string]any{"Name": "Ana"}})
	if err != nil {
		panic(err)
	}
	if err := db.Close(); err != nil {
		panic(err)
	}

	db, err = tablestore.Open(dir, nil)
	if err != nil {
		panic(err)
	}
	defer db.Close()
	e, err := db.Table("people").Get(ctx, "Sales", "0042", nil) // names ignore case
	if err != nil {
		panic(err)
	}
	fmt.Println(e.PartitionKey, e.RowKey, e.Properties["Name"])
	// Output:
	// Sales 0042 Ana
}

// An in-memory store behaves as one on disk and is gone after Close:
// the store for unit tests.
func ExampleOpenInMemory() {
	ctx := context.Background()
	db, err := tablestore.OpenInMemory(nil)
	if err != nil {
		panic(err)
	}
	defer db.Close()

	if _, err := db.CreateTable(ctx, "Orders"); err != nil {
		panic(err)
	}
	_, err = db.CreateTable(ctx, "orders")
	fmt.Println(tablestore.ErrorCode(err), errors.Is(err, tablestore.ErrTableAlreadyExists))
	ok, err := db.TableExists(ctx, "ORDERS")
	if err != nil {
		panic(err)
	}
	fmt.Println(ok)
	// Output:
	// TableAlreadyExists true
	// true
}

// Insert sets the entity's Timestamp and ETag; Get returns each property
// with its Go type, one per EDM type. Inserting the same keys twice fails
// with Azure's code.
func ExampleTable_Insert() {
	ctx := context.Background()
	db, err := tablestore.OpenInMemory(nil)
	if err != nil {
		panic(err)
	}
	defer db.Close()
	people, err := db.CreateTable(ctx, "People")
	if err != nil {
		panic(err)
	}

	e := &tablestore.Entity{PartitionKey: "Sales", RowKey: "0042", Properties: map[string]any{
		"Name":  "Ana",
		"Age":   int32(41),
		"Badge": int64(1) << 40,
		"Since": time.Date(2019, 3, 14, 9, 26, 53, 0, time.UTC),
	}}
	if err := people.Insert(ctx, e); err != nil {
		panic(err)
	}
	fmt.Println("ETag set:", e.ETag != "")

	got, err := people.Get(ctx, "Sales", "0042", nil)
	if err != nil {
		panic(err)
	}
	fmt.Printf("%T %v\n", got.Properties["Age"], got.Properties["Age"])
	fmt.Printf("%T %v\n", got.Properties["Badge"], got.Properties["Badge"])
	fmt.Println(got.Properties["Since"].(time.Time).Format(time.RFC3339))
	fmt.Println("same version:", got.ETag == e.ETag)

	err = people.Insert(ctx, &tablestore.Entity{PartitionKey: "Sales", RowKey: "0042"})
	fmt.Println(errors.Is(err, tablestore.ErrEntityAlreadyExists))
	// Output:
	// ETag set: true
	// int32 41
	// int64 1099511627776
	// 2019-03-14T09:26:53Z
	// same version: true
	// true
}

// Query reads every page of a filtered query for you, in (PartitionKey,
// RowKey) order. Here the partition is scanned and Age is compared on
// each entity; Select returns only Name besides the keys.
func ExampleTable_Query() {
	ctx := context.Background()
	db, err := tablestore.OpenInMemory(nil)
	if err != nil {
		panic(err)
	}
	defer db.Close()
	people, err := db.CreateTable(ctx, "People")
	if err != nil {
		panic(err)
	}
	for i, name := range []string{"Ana", "Bo", "Cy", "Di"} {
		err := people.Insert(ctx, &tablestore.Entity{PartitionKey: "Sales", RowKey: fmt.Sprint(i),
			Properties: map[string]any{"Name": name, "Age": int32(30 + 5*i)}})
		if err != nil {
			panic(err)
		}
	}

	q := tablestore.Query{Filter: "PartitionKey eq 'Sales' and Age ge 35", Select: []string{"Name"}}
	for e, err := range people.Query(ctx, q) {
		if err != nil {
			panic(err)
		}
		fmt.Println(e.RowKey, e.Properties)
	}
	// Output:
	// 1 map[Name:Bo]
	// 2 map[Name:Cy]
	// 3 map[Name:Di]
}

// QueryPage reads one page at a time: pass each page's Continuation into
// the next query until it is empty. The token is stateless, so a later
// request (another process, even) can resume with it.
func ExampleTable_QueryPage() {
	ctx := context.Background()
	db, err := tablestore.OpenInMemory(nil)
	if err != nil {
		panic(err)
	}
	defer db.Close()
	items, err := db.CreateTable(ctx, "Items")
	if err != nil {
		panic(err)
	}
	for _, rk := range []string{"a", "b", "c", "d", "e"} {
		if err := items.Insert(ctx, &tablestore.Entity{PartitionKey: "p", RowKey: rk}); err != nil {
			panic(err)
		}
	}

	q := tablestore.Query{Filter: "PartitionKey eq 'p'", Top: 2}
	for {
		page, err := items.QueryPage(ctx, q)
		if err != nil {
			panic(err)
		}
		for _, e := range page.Entities {
			fmt.Print(e.RowKey, " ")
		}
		fmt.Println("| more:", page.Continuation != "")
		if page.Continuation == "" {
			break
		}
		q.Continuation = page.Continuation
	}
	// Output:
	// a b | more: true
	// c d | more: true
	// e | more: false
}

// A batch is an entity group transaction: up to 100 actions on one
// partition, applied all together or not at all. A failure names the
// 0-based index of the action that failed.
func ExampleTable_NewBatch() {
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

	err = orders.NewBatch().
		Insert(&tablestore.Entity{PartitionKey: "c1", RowKey: "order-1", Properties: map[string]any{"Total": 10.5}}).
		Insert(&tablestore.Entity{PartitionKey: "c1", RowKey: "order-2", Properties: map[string]any{"Total": 4.0}}).
		Upsert(&tablestore.Entity{PartitionKey: "c1", RowKey: "summary", Properties: map[string]any{"Orders": int32(2)}}, tablestore.Replace).
		Submit(ctx)
	if err != nil {
		panic(err)
	}

	// The second action deletes an entity that does not exist, so the
	// first is not applied either.
	err = orders.NewBatch().
		Insert(&tablestore.Entity{PartitionKey: "c1", RowKey: "order-3"}).
		Delete("c1", "order-9", tablestore.ETagAny).
		Submit(ctx)
	var be *tablestore.BatchError
	if errors.As(err, &be) {
		fmt.Println("action", be.Index, "failed:", be.Err.Code)
	}

	for e, err := range orders.Query(ctx, tablestore.Query{Filter: "PartitionKey eq 'c1'"}) {
		if err != nil {
			panic(err)
		}
		fmt.Println(e.RowKey)
	}
	// Output:
	// action 1 failed: ResourceNotFound
	// order-1
	// order-2
	// summary
}

// Employee is mapped field by field: the keys fill the entity's own
// fields, the tag renames a property, and a field of type ETag receives
// the entity's ETag.
type Employee struct {
	PartitionKey string // department
	RowKey       string // employee ID
	Name         string
	Age          int32
	Email        string `table:"EmailAddress,omitempty"`
	ETag         tablestore.ETag
}

// GetStruct reads an entity straight into a struct; InsertStruct writes one.
func ExampleGetStruct() {
	ctx := context.Background()
	db, err := tablestore.OpenInMemory(nil)
	if err != nil {
		panic(err)
	}
	defer db.Close()
	staff, err := db.CreateTable(ctx, "Staff")
	if err != nil {
		panic(err)
	}
	err = staff.InsertStruct(ctx, Employee{PartitionKey: "Sales", RowKey: "0042",
		Name: "Ana", Age: 41, Email: "ana@example.com"})
	if err != nil {
		panic(err)
	}

	ana, err := tablestore.GetStruct[Employee](ctx, staff, "Sales", "0042", nil)
	if err != nil {
		panic(err)
	}
	fmt.Println(ana.Name, ana.Age, ana.Email, ana.ETag != "")

	raw, err := staff.Get(ctx, "Sales", "0042", nil)
	if err != nil {
		panic(err)
	}
	fmt.Println(raw.Properties["EmailAddress"])
	// Output:
	// Ana 41 ana@example.com true
	// ana@example.com
}

// QueryStructs yields every match as a struct, page after page.
func ExampleQueryStructs() {
	ctx := context.Background()
	db, err := tablestore.OpenInMemory(nil)
	if err != nil {
		panic(err)
	}
	defer db.Close()
	staff, err := db.CreateTable(ctx, "Staff")
	if err != nil {
		panic(err)
	}
	for _, e := range []Employee{
		{PartitionKey: "HR", RowKey: "0007", Name: "Bo", Age: 29},
		{PartitionKey: "Sales", RowKey: "0042", Name: "Ana", Age: 41},
		{PartitionKey: "Sales", RowKey: "0043", Name: "Cy", Age: 52},
	} {
		if err := staff.InsertStruct(ctx, e); err != nil {
			panic(err)
		}
	}

	for e, err := range tablestore.QueryStructs[Employee](ctx, staff, tablestore.Query{Filter: "Age gt 30"}) {
		if err != nil {
			panic(err)
		}
		fmt.Println(e.PartitionKey, e.RowKey, e.Name, e.Age)
	}
	// Output:
	// Sales 0042 Ana 41
	// Sales 0043 Cy 52
}

// A transaction action's entity takes any of its three forms: a map
// entity, a struct (StructEntity) and a decoded JSON body (RawEntity).
func ExampleStructEntity() {
	ctx := context.Background()
	db, err := tablestore.OpenInMemory(nil)
	if err != nil {
		panic(err)
	}
	defer db.Close()
	staff, err := db.CreateTable(ctx, "Staff")
	if err != nil {
		panic(err)
	}
	var raw tablestore.RawEntity
	if err := raw.UnmarshalJSON([]byte(`{"PartitionKey":"Sales","RowKey":"0044","Name":"Di"}`)); err != nil {
		panic(err)
	}
	ana := &Employee{PartitionKey: "Sales", RowKey: "0042", Name: "Ana", Age: 41}
	err = staff.SubmitTransaction(ctx, []tablestore.TransactionAction{
		{Type: tablestore.ActionInsert, Entity: &tablestore.Entity{PartitionKey: "Sales", RowKey: "0043",
			Properties: map[string]any{"Name": "Cy"}}},
		{Type: tablestore.ActionInsert, Entity: tablestore.StructEntity(ana)},
		{Type: tablestore.ActionInsert, Entity: &raw},
	})
	if err != nil {
		panic(err)
	}
	fmt.Println(ana.ETag == raw.ETag) // one transaction, one version

	for e, err := range tablestore.QueryStructs[Employee](ctx, staff, tablestore.Query{}) {
		if err != nil {
			panic(err)
		}
		fmt.Println(e.RowKey, e.Name)
	}
	// Output:
	// true
	// 0042 Ana
	// 0043 Cy
	// 0044 Di
}
