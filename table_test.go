package tablestore

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tablestore/tablestore/driver"
	"github.com/tablestore/tablestore/edm"
)

var ctx = context.Background()

func openTestDB(t *testing.T, opts *Options) *DB {
	t.Helper()
	db, err := OpenInMemory(opts)
	require.NoError(t, err)
	t.Cleanup(func() { _ = db.Close() })
	return db
}

// wrappingConn hands out its driver's tables wrapped by wrap, so a test
// can watch or change what the library asks of a table.
type wrappingConn struct {
	driver.Conn
	wrap func(driver.Table) driver.Table
}

func (c wrappingConn) Table(name string) driver.Table { return c.wrap(c.Conn.Table(name)) }

func requireCode(t *testing.T, err error, code Code) {
	t.Helper()
	require.Error(t, err)
	require.Equal(t, code, ErrorCode(err), "error: %v", err)
	require.True(t, errors.Is(err, sentinels[code]), "errors.Is(%v, sentinel %s)", err, code)
}

func TestTableNames(t *testing.T) {
	db := openTestDB(t, nil)
	for _, tc := range []struct {
		name string
		code Code
	}{
		{"abc", ""},
		{"A1b2C3", ""},
		{strings.Repeat("a", 63), ""},
		{"ab", edm.CodeOutOfRangeInput},
		{strings.Repeat("a", 64), edm.CodeOutOfRangeInput},
		{"1abc", edm.CodeInvalidResourceName},
		{"ab-c", edm.CodeInvalidResourceName},
		{"ab_c", edm.CodeInvalidResourceName},
		{"abcé", edm.CodeInvalidResourceName},
		{"tables", edm.CodeInvalidInput},
		{"Tables", edm.CodeInvalidInput},
	} {
		_, err := db.CreateTable(ctx, tc.name)
		if tc.code == "" {
			require.NoError(t, err, tc.name)
		} else {
			requireCode(t, err, tc.code)
		}
	}
	_, err := db.CreateTable(ctx, "ABC")
	requireCode(t, err, edm.CodeTableAlreadyExists)
	page, err := db.ListTables(ctx, &ListTablesOptions{Prefix: "A"})
	require.NoError(t, err)
	require.Equal(t, []string{"A1b2C3", strings.Repeat("a", 63), "abc"}, page.Names)
}

func TestListTablesPaging(t *testing.T) {
	db := openTestDB(t, nil)
	var want []string
	for i := 0; i < 25; i++ {
		name := fmt.Sprintf("T%03d", i)
		if i%2 == 0 {
			name = strings.ToLower(name)
		}
		want = append(want, name)
		_, err := db.CreateTable(ctx, name)
		require.NoError(t, err)
	}
	var got []string
	opts := &ListTablesOptions{Top: 7}
	for pages := 0; ; pages++ {
		require.Less(t, pages, 10)
		page, err := db.ListTables(ctx, opts)
		require.NoError(t, err)
		require.LessOrEqual(t, len(page.Names), 7)
		got = append(got, page.Names...)
		if page.Continuation == "" {
			break
		}
		opts.Continuation = page.Continuation
	}
	require.Equal(t, want, got)
	_, err := db.ListTables(ctx, &ListTablesOptions{Top: 1001})
	requireCode(t, err, edm.CodeInvalidInput)
	_, err = db.ListTables(ctx, &ListTablesOptions{Continuation: "no!"})
	requireCode(t, err, edm.CodeInvalidInput)
}

func TestEntityLifecycle(t *testing.T) {
	db := openTestDB(t, nil)
	tbl, err := db.CreateTable(ctx, "People")
	require.NoError(t, err)
	h := db.Table("people") // any case addresses the table

	e := &Entity{PartitionKey: "p", RowKey: "r", Properties: map[string]any{"Name": "Ana", "Age": int32(30)}}
	require.NoError(t, tbl.Insert(ctx, e))
	require.Regexp(t, regexp.MustCompile(`^W/"datetime'\d{4}-\d\d-\d\dT\d\d%3A\d\d%3A\d\d\.\d{7}Z'"$`), string(e.ETag))
	requireCode(t, h.Insert(ctx, &Entity{PartitionKey: "p", RowKey: "r"}), edm.CodeEntityAlreadyExists)

	got, err := h.Get(ctx, "p", "r", nil)
	require.NoError(t, err)
	require.Equal(t, e.ETag, got.ETag)
	require.True(t, e.Timestamp.Equal(got.Timestamp))
	require.Equal(t, map[string]any{"Name": "Ana", "Age": int32(30)}, got.Properties)

	// Merge keeps Age; a stale ETag is refused.
	m := &Entity{PartitionKey: "p", RowKey: "r", Properties: map[string]any{"City": "Porto"}}
	require.NoError(t, h.Update(ctx, m, Merge, e.ETag))
	require.NotEqual(t, e.ETag, m.ETag)
	requireCode(t, h.Update(ctx, m, Merge, e.ETag), edm.CodeUpdateConditionNotSatisfied)
	got, err = h.Get(ctx, "p", "r", nil)
	require.NoError(t, err)
	require.Equal(t, map[string]any{"Name": "Ana", "Age": int32(30), "City": "Porto"}, got.Properties)

	// Replace drops what is not given.
	r := &Entity{PartitionKey: "p", RowKey: "r", Properties: map[string]any{"Only": true}}
	require.NoError(t, h.Update(ctx, r, Replace, ETagAny))
	got, err = h.Get(ctx, "p", "r", &GetOptions{Select: []string{"Only", "Missing"}})
	require.NoError(t, err)
	require.Equal(t, map[string]any{"Only": true}, got.Properties)
	require.Equal(t, r.ETag, got.ETag)

	requireCode(t, h.Update(ctx, &Entity{PartitionKey: "p", RowKey: "nope"}, Merge, ETagAny), edm.CodeResourceNotFound)
	requireCode(t, h.Update(ctx, r, Merge, ""), edm.CodeInvalidInput)
	requireCode(t, h.Update(ctx, r, UpdateMode(9), ETagAny), edm.CodeInvalidInput)

	// Upsert inserts, then merges or replaces.
	u := &Entity{PartitionKey: "p", RowKey: "u", Properties: map[string]any{"A": int64(1)}}
	require.NoError(t, h.Upsert(ctx, u, Merge))
	require.NoError(t, h.Upsert(ctx, &Entity{PartitionKey: "p", RowKey: "u", Properties: map[string]any{"B": 2.5}}, Merge))
	got, err = h.Get(ctx, "p", "u", nil)
	require.NoError(t, err)
	require.Equal(t, map[string]any{"A": int64(1), "B": 2.5}, got.Properties)
	require.NoError(t, h.Upsert(ctx, &Entity{PartitionKey: "p", RowKey: "u", Properties: map[string]any{"C": "c"}}, Replace))
	got, err = h.Get(ctx, "p", "u", nil)
	require.NoError(t, err)
	require.Equal(t, map[string]any{"C": "c"}, got.Properties)

	// Delete needs an If-Match and honours it.
	requireCode(t, h.Delete(ctx, "p", "u", ""), edm.CodeInvalidInput)
	requireCode(t, h.Delete(ctx, "p", "u", e.ETag), edm.CodeUpdateConditionNotSatisfied)
	require.NoError(t, h.Delete(ctx, "p", "u", got.ETag))
	requireCode(t, h.Delete(ctx, "p", "u", ETagAny), edm.CodeResourceNotFound)
	_, err = h.Get(ctx, "p", "u", nil)
	requireCode(t, err, edm.CodeResourceNotFound)

	// A missing table.
	missing := db.Table("nothere")
	requireCode(t, missing.Insert(ctx, &Entity{PartitionKey: "p", RowKey: "r"}), edm.CodeTableNotFound)
	_, err = missing.Get(ctx, "p", "r", nil)
	requireCode(t, err, edm.CodeTableNotFound)
	requireCode(t, missing.Delete(ctx, "p", "r", ETagAny), edm.CodeTableNotFound)
	requireCode(t, db.DeleteTable(ctx, "nothere"), edm.CodeResourceNotFound)
}

func TestTimestampsStrictlyIncreaseWithStalledClock(t *testing.T) {
	fixed := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	db := openTestDB(t, &Options{Clock: func() time.Time { return fixed }})
	tbl, err := db.CreateTable(ctx, "clock")
	require.NoError(t, err)
	e := &Entity{PartitionKey: "p", RowKey: "r"}
	require.NoError(t, tbl.Insert(ctx, e))
	require.True(t, e.Timestamp.Equal(fixed))
	seen := map[ETag]bool{e.ETag: true}
	prev := e.Timestamp
	for i := 0; i < 50; i++ {
		require.NoError(t, tbl.Upsert(ctx, e, Replace))
		require.True(t, e.Timestamp.After(prev), "timestamp %v not after %v", e.Timestamp, prev)
		require.False(t, seen[e.ETag])
		seen[e.ETag] = true
		prev = e.Timestamp
	}
	require.Equal(t, fixed.Add(50*100*time.Nanosecond), e.Timestamp)
}

func TestInvalidInputChangesNothing(t *testing.T) {
	db := openTestDB(t, nil)
	tbl, err := db.CreateTable(ctx, "strict")
	require.NoError(t, err)
	orig := &Entity{PartitionKey: "p", RowKey: "r", Properties: map[string]any{"X": int32(1)}}
	require.NoError(t, tbl.Insert(ctx, orig))
	bad := []struct {
		props map[string]any
		pk    string
		code  Code
	}{
		{map[string]any{"X": float32(1)}, "p", edm.CodeInvalidValueType},
		{map[string]any{"1x": int32(1)}, "p", edm.CodePropertyNameInvalid},
		{map[string]any{strings.Repeat("n", 256): int32(1)}, "p", edm.CodePropertyNameTooLong},
		{map[string]any{"S": strings.Repeat("s", 40000)}, "p", edm.CodePropertyValueTooLarge},
		{map[string]any{"B": make([]byte, 65537)}, "p", edm.CodePropertyValueTooLarge},
		{map[string]any{"D": time.Date(1600, 12, 31, 0, 0, 0, 0, time.UTC)}, "p", edm.CodeOutOfRangeInput},
		{nil, "a/b", edm.CodeOutOfRangeInput},
		{nil, "a\tb", edm.CodeOutOfRangeInput},
		{nil, strings.Repeat("k", 1025), edm.CodeKeyValueTooLarge},
	}
	for _, b := range bad {
		e := &Entity{PartitionKey: b.pk, RowKey: "r", Properties: b.props}
		requireCode(t, tbl.Upsert(ctx, e, Replace), b.code)
		require.Empty(t, e.ETag)
	}
	many := map[string]any{}
	for i := 0; i < 253; i++ {
		many[fmt.Sprintf("P%d", i)] = int32(i)
	}
	requireCode(t, tbl.Upsert(ctx, &Entity{PartitionKey: "p", RowKey: "r", Properties: many}, Replace), edm.CodeTooManyProperties)
	big := map[string]any{}
	for i := 0; i < 20; i++ {
		big[fmt.Sprintf("P%d", i)] = make([]byte, 60000)
	}
	requireCode(t, tbl.Upsert(ctx, &Entity{PartitionKey: "p", RowKey: "r", Properties: big}, Replace), edm.CodeEntityTooLarge)

	got, err := tbl.Get(ctx, "p", "r", nil)
	require.NoError(t, err)
	require.Equal(t, orig.ETag, got.ETag)
	require.Equal(t, orig.Properties, got.Properties)
}

func TestMergeBeyondLimitsIsRefused(t *testing.T) {
	db := openTestDB(t, nil)
	tbl, err := db.CreateTable(ctx, "merge")
	require.NoError(t, err)
	half := map[string]any{}
	for i := 0; i < 200; i++ {
		half[fmt.Sprintf("A%d", i)] = int32(i)
	}
	e := &Entity{PartitionKey: "p", RowKey: "r", Properties: half}
	require.NoError(t, tbl.Insert(ctx, e))
	more := map[string]any{}
	for i := 0; i < 60; i++ {
		more[fmt.Sprintf("B%d", i)] = int32(i)
	}
	requireCode(t, tbl.Update(ctx, &Entity{PartitionKey: "p", RowKey: "r", Properties: more}, Merge, ETagAny), edm.CodeTooManyProperties)
	requireCode(t, tbl.Upsert(ctx, &Entity{PartitionKey: "p", RowKey: "r", Properties: more}, Merge), edm.CodeTooManyProperties)
	got, err := tbl.Get(ctx, "p", "r", nil)
	require.NoError(t, err)
	require.Equal(t, e.ETag, got.ETag)
	require.Len(t, got.Properties, 200)
}

func TestDeleteTableIsImmediateAndNameReusable(t *testing.T) {
	db := openTestDB(t, nil)
	tbl, err := db.CreateTable(ctx, "Daily")
	require.NoError(t, err)
	for i := 0; i < 100; i++ {
		require.NoError(t, tbl.Insert(ctx, &Entity{PartitionKey: "p", RowKey: fmt.Sprint(i)}))
	}
	require.NoError(t, db.DeleteTable(ctx, "DAILY"))
	_, err = tbl.Get(ctx, "p", "1", nil)
	requireCode(t, err, edm.CodeTableNotFound)
	again, err := db.CreateTable(ctx, "daily")
	require.NoError(t, err)
	_, err = again.Get(ctx, "p", "1", nil)
	requireCode(t, err, edm.CodeResourceNotFound)
	require.NoError(t, tbl.Insert(ctx, &Entity{PartitionKey: "p", RowKey: "1"}), "old handle addresses the new table")
	page, err := db.ListTables(ctx, nil)
	require.NoError(t, err)
	require.Equal(t, []string{"daily"}, page.Names)
}

func TestReopenKeepsData(t *testing.T) {
	dir := t.TempDir()
	db, err := Open(dir, &Options{MemTableSize: 64 << 10})
	require.NoError(t, err)
	tbl, err := db.CreateTable(ctx, "Keep")
	require.NoError(t, err)
	_, err = db.CreateTable(ctx, "Dropped")
	require.NoError(t, err)
	require.NoError(t, db.DeleteTable(ctx, "Dropped"))
	var last ETag
	for i := 0; i < 500; i++ {
		e := &Entity{PartitionKey: fmt.Sprint(i % 7), RowKey: fmt.Sprint(i), Properties: map[string]any{"V": int64(i), "Pad": strings.Repeat("x", 200)}}
		require.NoError(t, tbl.Insert(ctx, e))
		last = e.ETag
	}
	require.NoError(t, db.Close())
	require.ErrorIs(t, db.Close(), ErrClosed)
	require.ErrorIs(t, tbl.Insert(ctx, &Entity{PartitionKey: "a", RowKey: "b"}), ErrClosed)

	db, err = Open(dir, nil)
	require.NoError(t, err)
	defer db.Close()
	got, err := db.Table("keep").Get(ctx, "2", "499", nil)
	require.NoError(t, err)
	require.Equal(t, last, got.ETag)
	require.Equal(t, int64(499), got.Properties["V"])
	_, err = db.Table("Dropped").Get(ctx, "a", "b", nil)
	requireCode(t, err, edm.CodeTableNotFound)
	// A new table must not reuse the dropped table's ID.
	n, err := db.CreateTable(ctx, "New")
	require.NoError(t, err)
	_, err = n.Get(ctx, "0", "0", nil)
	requireCode(t, err, edm.CodeResourceNotFound)
}

func TestContextCancelled(t *testing.T) {
	db := openTestDB(t, nil)
	tbl, err := db.CreateTable(ctx, "ctx")
	require.NoError(t, err)
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	require.ErrorIs(t, tbl.Insert(cctx, &Entity{PartitionKey: "p", RowKey: "r"}), context.Canceled)
	_, err = tbl.Get(ctx, "p", "r", nil)
	requireCode(t, err, edm.CodeResourceNotFound)
}

func TestTimestampsIncreaseAcrossReopenWithClockBackwards(t *testing.T) {
	dir := t.TempDir()
	now := time.Date(2031, 5, 6, 7, 8, 9, 0, time.UTC)
	clock := func() time.Time { return now }
	db, err := Open(dir, &Options{Clock: clock})
	require.NoError(t, err)
	tbl, err := db.CreateTable(ctx, "clock")
	require.NoError(t, err)
	e := &Entity{PartitionKey: "p", RowKey: "r"}
	require.NoError(t, tbl.Upsert(ctx, e, Replace))
	first := e.Timestamp
	require.NoError(t, db.Close())

	now = now.Add(-time.Hour) // the wall clock went backwards
	db, err = Open(dir, &Options{Clock: clock})
	require.NoError(t, err)
	defer db.Close()
	e2 := &Entity{PartitionKey: "p", RowKey: "r"}
	require.NoError(t, db.Table("clock").Upsert(ctx, e2, Replace))
	require.True(t, e2.Timestamp.After(first), "%v not after %v", e2.Timestamp, first)
	require.NotEqual(t, e.ETag, e2.ETag)
}

func TestETagFormat(t *testing.T) {
	for _, ts := range []time.Time{
		time.Date(2021, 8, 31, 15, 41, 38, 302781600, time.UTC),
		time.Date(1601, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(9999, 12, 31, 23, 59, 59, 999999900, time.UTC),
		time.Date(2024, 2, 29, 1, 2, 3, 100, time.FixedZone("x", 3600)),
	} {
		want := `W/"datetime'` + strings.ReplaceAll(ts.UTC().Format("2006-01-02T15:04:05.0000000Z"), ":", "%3A") + `'"`
		require.Equal(t, ETag(want), etagFor(ts))
	}
	require.Equal(t, ETag(`W/"datetime'2021-08-31T15%3A41%3A38.3027816Z'"`), etagFor(time.Date(2021, 8, 31, 15, 41, 38, 302781600, time.UTC)))
}

func TestDBTableNames(t *testing.T) {
	db := openTestDB(t, nil)
	for _, name := range []string{"Beta", "alpha", "AlphaTwo", "gamma"} {
		_, err := db.CreateTable(ctx, name)
		require.NoError(t, err)
	}
	collect := func(prefix string, most int) []string {
		var got []string
		for n, err := range db.TableNames(ctx, prefix) {
			require.NoError(t, err)
			if got = append(got, n); len(got) == most {
				break
			}
		}
		return got
	}
	require.Equal(t, []string{"alpha", "AlphaTwo", "Beta", "gamma"}, collect("", 10))
	require.Equal(t, []string{"alpha", "AlphaTwo"}, collect("ALPHA", 10))
	require.Equal(t, []string{"alpha"}, collect("", 1))
	for _, err := range db.TableNames(ctx, "") {
		require.NoError(t, err)
	}
	require.NoError(t, db.Close())
	for n, err := range db.TableNames(ctx, "") {
		require.Equal(t, "", n)
		require.ErrorIs(t, err, ErrClosed)
	}
}

// TestIfMatchSyntax checks that a malformed If-Match value is InvalidInput
// and a well-formed stale one UpdateConditionNotSatisfied, for updates,
// deletes and transactions alike, and that nothing changes.
func TestIfMatchSyntax(t *testing.T) {
	ctx := context.Background()
	db := openTestDB(t, nil)
	tbl, err := db.CreateTable(ctx, "ifmatch")
	require.NoError(t, err)
	e := &Entity{PartitionKey: "p", RowKey: "r", Properties: map[string]any{"N": int32(1)}}
	require.NoError(t, tbl.Insert(ctx, e))
	current := e.ETag

	malformed := []ETag{"abc", `W/abc`, `"unterminated`, `W/"has space"`, `W/"a"b"`, `"`, `W/`, " *", "**", `""x`}
	wellFormed := []ETag{
		`W/"datetime'2001-01-01T00%3A00%3A00.0000000Z'"`, // ours, stale
		`W/"0x8D9A1B2C3D4E5F6"`,                          // Azure's older form
		`"0x8D9A1B2C3D4E5F6"`,                            // strong
		`W/""`, `""`,
		`w/"wrong"`, `w/"datetime'2001-01-01T00%3A00%3A00.0000000Z'"`, // a lower-case weak prefix, as Azure takes it
	}
	try := func(tag ETag) []error {
		upd := &Entity{PartitionKey: "p", RowKey: "r", Properties: map[string]any{"N": int32(2)}}
		return []error{
			tbl.Update(ctx, upd, Merge, tag),
			tbl.Update(ctx, upd, Replace, tag),
			tbl.Delete(ctx, "p", "r", tag),
			tbl.NewBatch().Update(upd, Merge, tag).Submit(ctx),
			tbl.NewBatch().Delete("p", "r", tag).Submit(ctx),
		}
	}
	for _, tag := range malformed {
		for i, err := range try(tag) {
			require.ErrorIs(t, err, ErrInvalidInput, "%q, call %d", tag, i)
		}
	}
	for _, tag := range wellFormed {
		for i, err := range try(tag) {
			require.ErrorIs(t, err, ErrUpdateConditionNotSatisfied, "%q, call %d", tag, i)
		}
	}
	got, err := tbl.Get(ctx, "p", "r", nil)
	require.NoError(t, err)
	require.Equal(t, current, got.ETag)
	require.Equal(t, int32(1), got.Properties["N"])

	// The current ETag, also with its weak prefix in lower case, and the
	// wildcard still work.
	upd := &Entity{PartitionKey: "p", RowKey: "r", Properties: map[string]any{"N": int32(3)}}
	require.NoError(t, tbl.Update(ctx, upd, Merge, "w/"+current[2:]))
	got, err = tbl.Get(ctx, "p", "r", nil)
	require.NoError(t, err)
	require.NoError(t, tbl.Update(ctx, upd, Merge, got.ETag))
	require.NoError(t, tbl.Delete(ctx, "p", "r", ETagAny))
}
