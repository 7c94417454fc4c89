package tablestore

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tablestore/tablestore/driver"
	"github.com/tablestore/tablestore/edm"
	"github.com/tablestore/tablestore/internal/wire"
)

// rawBodies are JSON bodies whose decoding and writing as a RawEntity
// must match Entity's: valid ones of every type, and refusals at each
// step (decoding, keys, limits).
var rawBodies = []string{
	`{"PartitionKey":"p","RowKey":"r"}`,
	`{"PartitionKey":"p","RowKey":"r2","Name":"x","N":5,"Big":9007199254740993,"D":2.5,"B":true,"Z":null}`,
	`{"PartitionKey":"p","RowKey":"r3","I@odata.type":"Edm.Int64","I":"-42","T@odata.type":"Edm.DateTime","T":"2024-01-02T03:04:05.1234567Z",` +
		`"G@odata.type":"Edm.Guid","G":"0e984725-c51c-4bf4-9960-e1c80e27aba0","Bin@odata.type":"Edm.Binary","Bin":"AAEC",` +
		`"Nan@odata.type":"Edm.Double","Nan":"NaN","odata.etag":"W/\"x\"","Timestamp":"2020-01-01T00:00:00Z"}`,
	`{"PartitionKey":"p","RowKey":"r4","Esc\u00e9":"a\"b\\c\n\u2603"}`,
	`{"PartitionKey":"p","RowKey":"r5","A":1,"A":2}`,
	`{"PartitionKey":"p","RowKey":"r6","I@odata.type":"Edm.Int64","I":"x"}`,
	`{"PartitionKey":"p","RowKey":"r7","1bad":1}`,
	`{"PartitionKey":"p"}`,
	`{"PartitionKey":"p","RowKey":"a/b"}`,
	`{"PartitionKey":"p","RowKey":"r8","S":"` + strings.Repeat("x", 40000) + `"}`,
	`{"PartitionKey":"p","RowKey":"a/b","S":"` + strings.Repeat("x", 40000) + `"}`, // the key's error first
	`{"PartitionKey":"p","RowKey":"r12","T@odata.type":"Edm.DateTime","T":"1600-01-01T00:00:00Z"}`,
	`{"PartitionKey":"p","RowKey":"r9","Nested":{"a":1}}`,
	`[1]`,
	`{"PartitionKey":"p","RowKey":"r10",`,
	`{"PartitionKey":"p","RowKey":"r11","Timestamp":"2020-01-01T00:00:00Z","X@odata.type":"Edm.String"}`,
}

// TestRawEntityMatchesEntity writes every body as an Entity into one
// table and as a RawEntity into another, in a transaction and through a
// bulk writer: the errors match (code and message), and so do the stored
// entities.
func TestRawEntityMatchesEntity(t *testing.T) {
	db, err := OpenInMemory(&Options{NoSync: true})
	require.NoError(t, err)
	defer db.Close()
	maps, err := db.CreateTable(ctx, "Maps")
	require.NoError(t, err)
	raws, err := db.CreateTable(ctx, "Raws")
	require.NoError(t, err)
	bodies := append([]string(nil), rawBodies...)
	props := make([]string, 0, 256)
	for i := range 256 { // too many properties: refused by the write
		props = append(props, fmt.Sprintf(`"P%d":%d`, i, i))
	}
	bodies = append(bodies, `{"PartitionKey":"p","RowKey":"many",`+strings.Join(props, ",")+`}`)
	for _, body := range bodies {
		// Decoding, then writing, fail alike at each step.
		var e Entity
		var r RawEntity
		errE, errR := e.UnmarshalJSON([]byte(body)), r.UnmarshalJSON([]byte(body))
		require.Equal(t, fmt.Sprint(errE), fmt.Sprint(errR), "decoding %.80s", body)
		if errE == nil && errR == nil {
			require.Equal(t, e.PartitionKey, r.PartitionKey)
			require.Equal(t, e.RowKey, r.RowKey)
			require.Equal(t, e.ETag, r.ETag)
			require.True(t, e.Timestamp.Equal(r.Timestamp))
		}
		if errE == nil {
			errE = maps.SubmitTransaction(ctx, []TransactionAction{{Type: ActionUpsertReplace, Entity: &e}})
		}
		if errR == nil {
			errR = raws.SubmitTransaction(ctx, []TransactionAction{{Type: ActionUpsertReplace, Entity: &r}})
		}
		require.Equal(t, codedText(errE), codedText(errR), "%.80s", body)
		if errE != nil {
			continue
		}
		require.Equal(t, e.Timestamp.IsZero(), r.Timestamp.IsZero())
		// The raw entity writes itself as the entity it stored reads back.
		stored, err := raws.Get(ctx, r.PartitionKey, r.RowKey, nil)
		require.NoError(t, err)
		for _, md := range []JSONMetadata{MinimalMetadata, NoMetadata, FullMetadata} {
			o := &JSONOptions{Metadata: md, LinkBase: "http://h/a/", LinkTable: "Raws", Type: "a.Raws"}
			want, err := AppendEntityJSON(nil, stored, o)
			require.NoError(t, err)
			got, err := r.AppendJSON(nil, o)
			require.NoError(t, err)
			require.Equal(t, string(want), string(got))
		}
		got, err := raws.Get(ctx, r.PartitionKey, r.RowKey, nil)
		require.NoError(t, err)
		want, err := maps.Get(ctx, e.PartitionKey, e.RowKey, nil)
		require.NoError(t, err)
		requireSameProperties(t, want.Properties, got.Properties)
		require.Equal(t, r.ETag, got.ETag)
	}

	// The bulk writer: the same refusals, the same entities.
	wm, err := maps.NewBulkWriter(&BulkOptions{Action: ActionUpsertReplace})
	require.NoError(t, err)
	wr, err := raws.NewBulkWriter(&BulkOptions{Action: ActionUpsertReplace})
	require.NoError(t, err)
	var r RawEntity // reused across entities
	for i, body := range bodies {
		var e Entity
		if e.UnmarshalJSON([]byte(body)) != nil || r.UnmarshalJSON([]byte(body)) != nil {
			continue
		}
		e.RowKey, r.RowKey = "bulk"+e.RowKey, "bulk"+r.RowKey
		errE, errR := wm.Add(ctx, &e), wr.Add(ctx, &r)
		require.Equal(t, fmt.Sprint(errE), fmt.Sprint(errR), "bulk %d", i)
	}
	require.NoError(t, wm.Flush(ctx))
	require.NoError(t, wr.Flush(ctx))
	require.Equal(t, wm.Stats().Written, wr.Stats().Written)
	var be *BulkError
	require.True(t, errors.As(wr.Add(ctx, (*RawEntity)(nil)), &be))
	require.Equal(t, edm.CodeInvalidInput, ErrorCode(be))
	for e, err := range maps.Query(ctx, Query{}) {
		require.NoError(t, err)
		got, err := raws.Get(ctx, e.PartitionKey, e.RowKey, nil)
		require.NoError(t, err)
		requireSameProperties(t, e.Properties, got.Properties)
	}

	_, err = (&RawEntity{}).AppendJSON(nil, nil)
	require.Equal(t, edm.CodeInvalidInput, ErrorCode(err))

	// A RawEntity holding nothing.
	err = raws.SubmitTransaction(ctx, []TransactionAction{{Type: ActionInsert, Entity: &RawEntity{PartitionKey: "p", RowKey: "x"}}})
	require.Equal(t, edm.CodeInvalidInput, ErrorCode(err))
}

// TestAppendPageJSON checks the JSON pages against AppendEntityJSON of
// QueryPage's entities, at each metadata level, with and without a
// projection, and that pages cut by keep resume where they were cut.
func TestAppendPageJSON(t *testing.T) {
	tbl := allocTable(t, 250)
	for _, md := range []JSONMetadata{MinimalMetadata, NoMetadata, FullMetadata} {
		for _, sel := range [][]string{nil, {"Name", "Missing", "Count"}} {
			q := Query{Top: 100, Select: sel, Filter: "Bucket lt 50"}
			opts := &JSONOptions{Metadata: md, Type: "acct.Allocs", LinkBase: "http://h/acct/", LinkTable: "Allocs"}
			for {
				got, page, err := tbl.appendPageJSON(ctx, nil, q, opts, nil)
				require.NoError(t, err)
				want, err := tbl.QueryPage(ctx, q)
				require.NoError(t, err)
				var b []byte
				for i, e := range want.Entities {
					if i > 0 {
						b = append(b, ',')
					}
					o := *opts
					o.Select = sel
					o.EditLink = wire.EntityPath("Allocs", e.PartitionKey, e.RowKey)
					o.ID = "http://h/acct/" + o.EditLink
					o.LinkBase, o.LinkTable = "", ""
					b, err = AppendEntityJSON(b, e, &o)
					require.NoError(t, err)
				}
				require.Equal(t, string(b), string(got))
				if len(want.Entities) > 0 { // GetJSON writes an entity as the page does
					e := want.Entities[len(want.Entities)-1]
					o := *opts
					o.Select = sel
					one, etag, err := tbl.getJSON(ctx, nil, e.PartitionKey, e.RowKey, &o)
					require.NoError(t, err)
					require.Equal(t, e.ETag, etag)
					require.True(t, bytes.HasSuffix(b, one))
				}
				require.Equal(t, want.Continuation, page.Continuation)
				require.Equal(t, want.PageCost, page.PageCost)
				require.True(t, json.Valid(append(append([]byte("["), got...), ']')))
				if page.Continuation == "" {
					break
				}
				q.Continuation = page.Continuation
			}
		}
	}

	// Pages of at most 7 entities cut by keep read the same entities, in
	// order, as one page.
	whole, _, err := tbl.appendPageJSON(ctx, nil, Query{Top: 1000}, nil, nil)
	require.NoError(t, err)
	var joined []byte
	q := Query{Top: 1000}
	for pages := 0; ; pages++ {
		require.Less(t, pages, 100)
		b, page, err := tbl.appendPageJSON(ctx, nil, q, nil, func(b []byte, n int) bool { return n <= 7 })
		require.NoError(t, err)
		if n := bytes.Count(b, []byte(`"PartitionKey"`)); page.Continuation != "" {
			require.Equal(t, 7, n)
		} else {
			require.LessOrEqual(t, n, 7)
		}
		if len(joined) > 0 && len(b) > 0 {
			joined = append(joined, ',')
		}
		joined = append(joined, b...)
		if page.Continuation == "" {
			break
		}
		require.Equal(t, -1, page.Examined)
		q.Continuation = page.Continuation
	}
	require.Equal(t, string(whole), string(joined))

	// Bad options and queries are refused with Azure's codes, dst untouched.
	dst := []byte("x")
	out, _, err := tbl.appendPageJSON(ctx, dst, Query{}, &JSONOptions{Metadata: 9}, nil)
	require.Equal(t, edm.CodeInvalidInput, ErrorCode(err))
	require.Equal(t, "x", string(out))
	_, _, err = tbl.appendPageJSON(ctx, nil, Query{Filter: "Name eq"}, nil, nil)
	require.Equal(t, edm.CodeInvalidInput, ErrorCode(err))
	_, _, err = tbl.getJSON(ctx, nil, "p0000000", "r0000001", &JSONOptions{Metadata: 9})
	require.Equal(t, edm.CodeInvalidInput, ErrorCode(err))

	// GetJSON's refusals are Get's.
	_, _, err = tbl.getJSON(ctx, nil, "p0000000", "absent", nil)
	require.Equal(t, edm.CodeResourceNotFound, ErrorCode(err))
	_, _, err = tbl.getJSON(ctx, nil, "p0000000", "r0000001", &JSONOptions{Select: []string{"bad name"}})
	require.Equal(t, edm.CodeInvalidInput, ErrorCode(err))
	// An index-order read cannot be cut by keep.
	require.NoError(t, tbl.CreateIndex(ctx, IndexSpec{Name: "byname", Properties: []string{"Name"}}))
	byName := Query{Index: "byname", Top: 5}
	_, _, err = tbl.appendPageJSON(ctx, nil, byName, nil, func([]byte, int) bool { return true })
	require.Equal(t, edm.CodeInvalidInput, ErrorCode(err))
	b, page, err := tbl.appendPageJSON(ctx, nil, byName, nil, nil)
	require.NoError(t, err)
	require.Equal(t, 5, bytes.Count(b, []byte(`"PartitionKey"`)))
	require.NotEmpty(t, page.Continuation)
}

// codedText is the text of err's *Error, without a batch's wrapping.
func codedText(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Error()
	}
	return fmt.Sprint(err)
}

// FuzzRawEntityMatchesEntity: for any body, decoding it as a RawEntity
// and preparing its insert gives what decoding it as an Entity and
// preparing that insert gives: the same errors at each step, or the same
// keys, size and stored bytes.
func FuzzRawEntityMatchesEntity(f *testing.F) {
	for _, b := range rawBodies {
		f.Add([]byte(b))
	}
	// The corpus shared with the server's FuzzBodyPaths.
	shared, err := os.ReadFile("testdata/entity_bodies.txt")
	if err != nil {
		f.Fatal(err)
	}
	for _, l := range strings.Split(string(shared), "\n") {
		if l != "" && !strings.HasPrefix(l, "#") {
			f.Add([]byte(l))
		}
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var e Entity
		var r RawEntity
		errE, errR := e.UnmarshalJSON(body), r.UnmarshalJSON(body)
		if fmt.Sprint(errE) != fmt.Sprint(errR) {
			t.Fatalf("%q: decoding: entity %v, raw %v", body, errE, errR)
		}
		if string(bytes.TrimSpace(body)) == "null" {
			return // both leave their entity as it is
		}
		var aE, aR driver.Action
		var bufE, bufR []byte
		var sizeE, sizeR int
		if errE == nil {
			aE, bufE, sizeE, errE = prepareAction(nil, ActionInsert, &e, "", nil)
		}
		if errR == nil {
			aR, bufR, sizeR, errR = prepareRaw(nil, ActionInsert, &r, "")
		}
		if codedText(errE) != codedText(errR) {
			t.Fatalf("%q: entity %v, raw %v", body, errE, errR)
		}
		if errE != nil {
			return
		}
		if aE.PartitionKey != aR.PartitionKey || aE.RowKey != aR.RowKey || sizeE != sizeR || !bytes.Equal(bufE, bufR) {
			t.Fatalf("%q: entity (%q, %q, %d, %x), raw (%q, %q, %d, %x)", body,
				aE.PartitionKey, aE.RowKey, sizeE, bufE, aR.PartitionKey, aR.RowKey, sizeR, bufR)
		}
	})
}

// TestRawEntityReset: a reset RawEntity holds no entity, its next
// decode reuses the buffer without allocating one, and a buffer over
// 64 KiB is not kept.
func TestRawEntityReset(t *testing.T) {
	db, err := OpenInMemory(&Options{NoSync: true})
	require.NoError(t, err)
	defer db.Close()
	_, err = db.CreateTable(ctx, "Resets")
	require.NoError(t, err)
	tb := db.Table("Resets")
	insert := func(e *RawEntity) error {
		return tb.SubmitTransaction(ctx, []TransactionAction{{Type: ActionInsert, Entity: e}})
	}
	zeroErr := insert(&RawEntity{})
	require.Error(t, zeroErr)

	body := []byte(`{"PartitionKey":"p","RowKey":"r","Name":"Ada","Age":36}`)
	var e RawEntity
	require.NoError(t, e.UnmarshalJSON(body))
	e.Reset()
	require.Equal(t, RawEntity{spare: e.spare}, e)
	require.Equal(t, zeroErr.Error(), fmt.Sprint(insert(&e)))

	// Decoding into the kept buffer allocates only the keys' strings.
	// AllocsPerRun counts every goroutine's allocations, and other
	// tests' stores may still be working in the background: only their
	// noise can raise a count, so each side takes its least of five.
	leastAllocs := func(f func()) float64 {
		least := math.Inf(1)
		for range 5 {
			least = min(least, testing.AllocsPerRun(100, f))
		}
		return least
	}
	fresh := leastAllocs(func() {
		var f RawEntity
		_ = f.UnmarshalJSON(body)
	})
	reused := leastAllocs(func() {
		e.Reset()
		_ = e.UnmarshalJSON(body)
	})
	t.Logf("allocations per decode: %.0f fresh, %.0f into a reset entity", fresh, reused)
	require.Less(t, reused, fresh)
	require.NoError(t, insert(&e))
	got, err := tb.Get(ctx, "p", "r", nil)
	require.NoError(t, err)
	require.Equal(t, "Ada", got.Properties["Name"])

	big := []byte(fmt.Sprintf(`{"PartitionKey":"p","RowKey":"big","A":%q,"B":%q,"C":%q}`,
		strings.Repeat("a", 30_000), strings.Repeat("b", 30_000), strings.Repeat("c", 30_000)))
	require.NoError(t, e.UnmarshalJSON(big))
	e.Reset()
	require.Nil(t, e.spare, "a buffer over 64 KiB is kept")
}
