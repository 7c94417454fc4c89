package driver_test

// This file is written as a driver outside this repository would be: it
// imports only public packages (driver, edm, filter), stores records in
// a sorted in-memory map, stamps them, and answers a planned query page
// from its ranges and residual.

import (
	"fmt"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tablestore/tablestore/driver"
	"github.com/tablestore/tablestore/edm"
	"github.com/tablestore/tablestore/filter"
)

// miniTable is the storage of a toy driver: stored records by key.
type miniTable struct {
	rows  map[driver.Key]driver.Record
	clock int64 // the last Timestamp given, in ticks
}

// commit stores one action's record the way Table.Commit would: a copy,
// stamped with a new Timestamp. Records given as Properties are encoded.
func (m *miniTable) commit(a driver.Action) error {
	m.clock++
	var rec driver.Record
	if a.Record != nil {
		rec = append(driver.Record(nil), a.Record...)
		if err := rec.SetTimestamp(m.clock); err != nil {
			return err
		}
	} else {
		var err error
		if rec, err = driver.Encode(nil, m.clock, a.Properties); err != nil {
			return err
		}
	}
	m.rows[driver.Key{PartitionKey: a.PartitionKey, RowKey: a.RowKey}] = rec
	return nil
}

// queryPage answers one page: it reads q's ranges from the resume point in
// key order, keeps the entities the residual accepts, and stops after Top.
func (m *miniTable) queryPage(q *driver.QueryRequest, emit func(driver.Row) error) (driver.PageResult, error) {
	keys := make([]driver.Key, 0, len(m.rows))
	for k := range m.rows {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, driver.Key.Compare)
	ranges := q.Ranges
	if q.NextPartitionKey != "" || q.NextRowKey != "" {
		ranges = driver.RangesFrom(ranges, driver.Key{PartitionKey: q.NextPartitionKey, RowKey: q.NextRowKey})
	}
	emitted := 0
	var view driver.RowView
	for _, r := range ranges {
		for _, k := range keys {
			if !r.Contains(k) {
				continue
			}
			if emitted == q.Top {
				return driver.PageResult{More: true, NextPartitionKey: k.PartitionKey, NextRowKey: k.RowKey}, nil
			}
			view = driver.RowView{PartitionKey: []byte(k.PartitionKey), RowKey: []byte(k.RowKey), Record: m.rows[k]}
			if !filter.Eval(q.Residual, &view) {
				continue
			}
			emitted++
			if err := emit(driver.Row{PartitionKey: k.PartitionKey, RowKey: k.RowKey, Record: m.rows[k]}); err != nil {
				return driver.PageResult{}, err
			}
		}
	}
	return driver.PageResult{}, nil
}

func str(s string) edm.Value { return edm.Value{Type: edm.TypeString, Bytes: []byte(s)} }

func i32(x int32) edm.Value { return edm.Value{Type: edm.TypeInt32, Int: int64(x)} }

func TestDriverOutsideTheRepository(t *testing.T) {
	m := &miniTable{rows: map[driver.Key]driver.Record{}}
	// package tablestore hands a driver either a record with a zero
	// Timestamp or sorted properties.
	people := []struct {
		pk, rk string
		age    int32
	}{{"Sales", "ann", 41}, {"Sales", "bob", 25}, {"Sales", "cat", 37}, {"Sales", "dan", 52}, {"Support", "eve", 60}}
	for i, p := range people {
		props := []driver.Property{{Name: "Age", Value: i32(p.age)}, {Name: "Name", Value: str(p.rk)}}
		a := driver.Action{Type: driver.ActionInsert, PartitionKey: p.pk, RowKey: p.rk}
		if i%2 == 0 {
			rec, err := driver.Encode(nil, 0, props)
			require.NoError(t, err)
			a.Record = rec
		} else {
			a.Properties = props
		}
		require.NoError(t, m.commit(a))
	}

	// Read one back: Timestamp, one property by name, all of them, and
	// the iterator.
	rec := m.rows[driver.Key{PartitionKey: "Sales", RowKey: "cat"}]
	require.NoError(t, rec.Check())
	ts, err := rec.Timestamp()
	require.NoError(t, err)
	require.Equal(t, int64(3), ts)
	age, ok := rec.Lookup("Age")
	require.True(t, ok)
	require.Equal(t, i32(37), age)
	props, err := rec.Properties()
	require.NoError(t, err)
	require.Equal(t, []driver.Property{{Name: "Age", Value: i32(37)}, {Name: "Name", Value: str("cat")}}, props)
	var names []string
	it := rec.Iter()
	for it.Next() {
		names = append(names, fmt.Sprintf("%s=%v", it.Name(), it.Value().Type))
	}
	require.NoError(t, it.Err())
	require.Equal(t, []string{"Age=Edm.Int32", "Name=Edm.String"}, names)

	// A planned query, as package tablestore would send it for
	// "PartitionKey eq 'Sales' and RowKey ge 'b' and Age gt 30": the
	// partition's range from RowKey 'b' on, and the residual on Age.
	f, err := filter.Compile("Age gt 30", nil)
	require.NoError(t, err)
	q := &driver.QueryRequest{
		Ranges:   []driver.KeyRange{{Start: driver.Key{PartitionKey: "Sales", RowKey: "b"}, End: driver.PartitionEnd("Sales")}},
		Residual: f.Root,
		Top:      1,
	}
	var got []string
	for {
		res, err := m.queryPage(q, func(r driver.Row) error {
			a, _ := r.Record.Lookup("Age")
			got = append(got, fmt.Sprintf("%s/%s:%d", r.PartitionKey, r.RowKey, a.Int))
			return nil
		})
		require.NoError(t, err)
		if !res.More {
			break
		}
		q.NextPartitionKey, q.NextRowKey = res.NextPartitionKey, res.NextRowKey
	}
	require.Equal(t, []string{"Sales/cat:37", "Sales/dan:52"}, got)

	// Corrupt bytes are errors, never panics.
	bad := append(driver.Record(nil), rec[:len(rec)-2]...)
	_, err = bad.Properties()
	require.EqualError(t, err, "tablestore: truncated record")
	require.EqualError(t, driver.Record{9}.Check(), "tablestore: truncated record")
}

// Encode writes a record from sorted properties; the readers take it
// apart again without a schema.
func ExampleEncode() {
	rec, err := driver.Encode(nil, 638000000000000000, []driver.Property{
		{Name: "Age", Value: edm.Value{Type: edm.TypeInt32, Int: 41}},
		{Name: "Email", Value: edm.Value{Type: edm.TypeString, Bytes: []byte("ann@contoso.com")}},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	ticks, _ := driver.Record(rec).Timestamp()
	fmt.Println(edm.FormatDateTime(ticks), len(rec), "bytes")
	it := driver.Record(rec).Iter()
	for it.Next() {
		fmt.Printf("%s %s %s\n", it.Name(), it.Value().Type, filter.FormatLiteral(it.Value()))
	}
	if err := it.Err(); err != nil {
		fmt.Println(err)
	}
	// Output:
	// 2022-09-28T22:13:20Z 41 bytes
	// Age Edm.Int32 41
	// Email Edm.String 'ann@contoso.com'
}
