package tablestore

import (
	"bytes"
	"fmt"
	"testing"
	"time"
)

// allocEntity is shaped like bench/'s entities: ten properties, four
// strings, two Int32, an Int64, a Double, a Boolean and a DateTime.
func allocEntity(p, r int) *Entity {
	return &Entity{
		PartitionKey: fmt.Sprintf("p%07d", p),
		RowKey:       fmt.Sprintf("r%07d", r),
		Properties: map[string]any{
			"Name": fmt.Sprintf("name %d", r), "Email": fmt.Sprintf("user%d@example.com", r),
			"City": "Lisbon", "Note": "a note of some length, for the record",
			"Count": int32(r), "Bucket": int32(r % 100), "Score": int64(r) * 1000,
			"Amount": float64(r) / 4, "Active": r%2 == 0,
			"Created": time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC).Add(time.Duration(r) * time.Second),
		},
	}
}

func allocTable(t testing.TB, rows int) *Table {
	t.Helper()
	db, err := OpenInMemory(&Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	tbl, err := db.CreateTable(ctx, "Allocs")
	if err != nil {
		t.Fatal(err)
	}
	for r := 0; r < rows; r += 100 {
		var actions []TransactionAction
		for i := r; i < r+100 && i < rows; i++ {
			actions = append(actions, TransactionAction{Type: ActionInsert, Entity: allocEntity(0, i)})
		}
		if err := tbl.SubmitTransaction(ctx, actions); err != nil {
			t.Fatal(err)
		}
	}
	return tbl
}

// TestAllocsPerEntity bounds the allocations of reading entities, which
// are deterministic, unlike their time: a page of 1,000 entities decoded
// into maps, and the same page read into structs.
func TestAllocsPerEntity(t *testing.T) {
	const rows = 1000
	tbl := allocTable(t, rows)
	perEntity := func(name string, limit float64, read func() int) {
		t.Helper()
		var n int
		allocs := testing.AllocsPerRun(5, func() { n = read() })
		if n != rows {
			t.Fatalf("%s: read %d entities, want %d", name, n, rows)
		}
		got := allocs / rows
		t.Logf("%s: %.2f allocations per entity", name, got)
		if got > limit && !raceEnabled {
			t.Errorf("%s: %.2f allocations per entity; the target is at most %v", name, got, limit)
		}
	}
	// A map entity boxes its values the ordinary way, one allocation per
	// value the runtime cannot box for free (it boxes booleans and
	// integers below 256 without allocating): here four strings, an
	// Int64, a Double, a DateTime and three in four Int32 Counts, 7.75.
	// The map of ten entries takes 4 (Go's maps allocate their header,
	// directory, table and groups once past 8 entries); entities and text
	// come from slabs and chunks shared by the page: 11.8 in all.
	perEntity("page into maps", 12.5, func() int {
		page, err := tbl.QueryPage(ctx, Query{Top: 1000})
		if err != nil {
			t.Fatal(err)
		}
		return len(page.Entities)
	})
	// A page written as JSON straight from the stored entities: the keys'
	// strings come from chunks shared by the page, and the ETag is one per
	// transaction (here 100 entities share it).
	buf := make([]byte, 0, 1<<20)
	perEntity("page as JSON", 0.1, func() int {
		b, _, err := tbl.appendPageJSON(ctx, buf[:0], Query{Top: 1000}, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		return bytes.Count(b, []byte(`"PartitionKey"`))
	})
	// A Get: the record's copy with its ETag, the entity, the map (4) and
	// its boxed values (7: here Count and Bucket are small enough to box
	// for free): 13 (the key's buffer is pooled; the rest of 13.5 absorbs
	// what a run's background work allocates).
	perEntity("get into a map, per entity", 13.5, func() int {
		for i := 0; i < rows; i++ {
			if _, err := tbl.Get(ctx, "p0000000", "r0000007", nil); err != nil {
				t.Fatal(err)
			}
		}
		return rows
	})
}

// allocRow is allocEntity's struct form.
type allocRow struct {
	PartitionKey, RowKey string
	Timestamp            time.Time
	ETag                 ETag
	Name, Email          string
	City, Note           string
	Count, Bucket        int32
	Score                int64
	Amount               float64
	Active               bool
	Created              time.Time
}

func TestAllocsPerEntityTyped(t *testing.T) {
	const rows = 1000
	tbl := allocTable(t, rows)
	for _, c := range []struct {
		name  string
		limit float64
		read  func() int
	}{
		{"page into structs", 2, func() int {
			page, err := QueryStructPage[allocRow](ctx, tbl, Query{Top: 1000})
			if err != nil {
				t.Fatal(err)
			}
			return len(page.Entities)
		}},
		// The record's copy with its ETag; the result stays on the stack.
		{"get into a struct, per entity", 1.5, func() int {
			for i := 0; i < rows; i++ {
				if _, err := GetStruct[allocRow](ctx, tbl, "p0000000", "r0000007", nil); err != nil {
					t.Fatal(err)
				}
			}
			return rows
		}},
	} {
		var n int
		allocs := testing.AllocsPerRun(5, func() { n = c.read() })
		if n != rows {
			t.Fatalf("%s: read %d entities, want %d", c.name, n, rows)
		}
		got := allocs / rows
		t.Logf("%s: %.2f allocations per entity", c.name, got)
		if got > c.limit && !raceEnabled {
			t.Errorf("%s: %.2f allocations per entity; at most %v expected", c.name, got, c.limit)
		}
	}
}

// TestAllocsPerWrittenEntity bounds what writing costs the library: a
// transaction of 100 upserts from entities already built (their maps
// are the caller's), from structs, and through a bulk writer. Maps are
// validated and encoded straight into the batch, with no copies per
// entity.
func TestAllocsPerWrittenEntity(t *testing.T) {
	tbl := allocTable(t, 0)
	const batch = 100
	maps := make([]TransactionAction, batch)
	structs := make([]TransactionAction, batch)
	for i := range batch {
		e := allocEntity(1, i)
		maps[i] = TransactionAction{Type: ActionUpsertReplace, Entity: e}
		structs[i] = TransactionAction{Type: ActionUpsertReplace, Entity: StructEntity(&allocRow{PartitionKey: "p0000002", RowKey: e.RowKey,
			Name: "n", Count: int32(i), Created: time.Unix(int64(i), 0).UTC()})}
	}
	raws := make([]RawEntity, batch)
	rawActions := make([]TransactionAction, batch)
	bodies := make([][]byte, batch)
	for i := range batch {
		e := allocEntity(4, i)
		b, err := e.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		bodies[i] = b
		rawActions[i] = TransactionAction{Type: ActionUpsertReplace, Entity: &raws[i]}
	}
	w, err := tbl.NewBulkWriter(&BulkOptions{Action: ActionUpsertReplace})
	if err != nil {
		t.Fatal(err)
	}
	entities := make([]*Entity, batch)
	for i := range entities {
		entities[i] = allocEntity(3, i)
	}
	for _, c := range []struct {
		name  string
		limit float64
		write func() error
	}{
		{"transaction of maps", 1, func() error { return tbl.SubmitTransaction(ctx, maps) }},
		{"transaction of structs", 1, func() error { return tbl.SubmitTransaction(ctx, structs) }},
		// Building the batch too: one allocation each, StructEntity's
		// wrapper.
		{"batch of structs, built and submitted", 1.2, func() error {
			b := tbl.NewBatch()
			for i := range structs {
				b.Upsert(StructEntity(structs[i].Entity.(*structEntity).v), Replace)
			}
			return b.Submit(ctx)
		}},
		// Decoding JSON bodies and writing them: the two key strings of
		// each entity (its record goes into the RawEntity's reused buffer).
		{"transaction of JSON bodies", 2.1, func() error {
			for i := range raws {
				if err := raws[i].UnmarshalJSON(bodies[i]); err != nil {
					return err
				}
			}
			return tbl.SubmitTransaction(ctx, rawActions)
		}},
		{"bulk writer of maps", 1, func() error {
			for _, e := range entities {
				if err := w.Add(ctx, e); err != nil {
					return err
				}
			}
			return w.Flush(ctx)
		}},
		// The records are queued as they are: no copy beyond the batch's.
		{"bulk writer of raw entities", 1, func() error {
			for i := range raws {
				if err := w.Add(ctx, &raws[i]); err != nil {
					return err
				}
			}
			return w.Flush(ctx)
		}},
	} {
		var err error
		allocs := testing.AllocsPerRun(20, func() {
			if e := c.write(); e != nil {
				err = e
			}
		})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		got := allocs / batch
		t.Logf("%s: %.2f allocations per entity", c.name, got)
		if got > c.limit && !raceEnabled {
			t.Errorf("%s: %.2f allocations per entity; at most %v expected", c.name, got, c.limit)
		}
	}
}

// TestAllocsPerUnsyncedTransaction bounds what one unsynced transaction
// of 100 struct upserts allocates in all, Pebble's share included: 3,
// one of them the ETag it returns. The commit allocates no closure and
// builds its error context only should it fail (each cost one more). The
// store is on disk: an in-memory one's files allocate as they grow.
func TestAllocsPerUnsyncedTransaction(t *testing.T) {
	db, err := Open(t.TempDir(), &Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	tbl, err := db.CreateTable(ctx, "Allocs")
	if err != nil {
		t.Fatal(err)
	}
	actions := benchStructActions(0, 100)
	allocs := testing.AllocsPerRun(100, func() {
		if e := tbl.SubmitTransaction(ctx, actions); e != nil {
			err = e
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%.2f allocations per transaction", allocs)
	if allocs > 3 && !raceEnabled {
		t.Errorf("%.2f allocations per transaction; at most 3 expected", allocs)
	}
}
