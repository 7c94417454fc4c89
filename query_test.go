package tablestore

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"
	"github.com/stretchr/testify/require"
	"github.com/tablestore/tablestore/driver"
	"github.com/tablestore/tablestore/edm"
	"github.com/tablestore/tablestore/filter"
	"github.com/tablestore/tablestore/internal/engine"
	"github.com/tablestore/tablestore/internal/plan"
)

// TestQueryPaging runs testdata/query_paging:
//
//	open [scanlimit=N]           a fresh DB and table "Items"
//	insert                       one entity per line: pk rk [name=literal ...]
//	pages [top=N] [select=a,b] [resume=pk/rk] [props]
//	<filter>                     every page until the query completes
//	explain [resume=pk/rk]
//	<filter>                     the plan text
//
// Literals: 'text' (String), 12 (Int32), 12L (Int64), 1.5 (Double),
// true/false (Boolean).
func TestQueryPaging(t *testing.T) {
	var tbl *Table
	datadriven.RunTest(t, "testdata/query_paging", func(t *testing.T, d *datadriven.TestData) string {
		switch d.Cmd {
		case "open":
			opts := &Options{}
			if d.HasArg("scanlimit") {
				d.ScanArgs(t, "scanlimit", &opts.PageScanLimit)
			}
			db := openTestDB(t, opts)
			var err error
			tbl, err = db.CreateTable(ctx, "Items")
			require.NoError(t, err)
			return ""
		case "insert":
			for _, line := range strings.Split(strings.TrimSpace(d.Input), "\n") {
				e, err := parseTestEntity(line)
				require.NoError(t, err, line)
				require.NoError(t, tbl.Insert(ctx, e), line)
			}
			return ""
		case "pages":
			q := Query{Filter: strings.TrimSpace(d.Input)}
			if d.HasArg("top") {
				d.ScanArgs(t, "top", &q.Top)
			}
			if d.HasArg("select") {
				var sel string
				d.ScanArgs(t, "select", &sel)
				q.Select = strings.Split(sel, ",")
			}
			if tok, ok := resumeArg(t, d); ok {
				q.Continuation = tok
			}
			var b strings.Builder
			for n := 1; n <= 50; n++ {
				page, err := tbl.QueryPage(ctx, q)
				if err != nil {
					fmt.Fprintf(&b, "error: %v\n", err)
					return b.String()
				}
				fmt.Fprintf(&b, "page %d:", n)
				for i, e := range page.Entities {
					if i > 0 {
						b.WriteByte(',')
					}
					b.WriteString(" " + formatTestEntity(e, d.HasArg("props")))
				}
				if page.Continuation == "" {
					b.WriteString(" -> done\n")
					return b.String()
				}
				fmt.Fprintf(&b, " -> next (%s, %s)\n", page.NextPartitionKey(), page.NextRowKey())
				q.Continuation = page.Continuation
			}
			return b.String() + "too many pages\n"
		case "explain":
			q := Query{Filter: strings.TrimSpace(d.Input)}
			if tok, ok := resumeArg(t, d); ok {
				q.Continuation = tok
			}
			s, err := explainText(tbl, q)
			if err != nil {
				return "error: " + err.Error() + "\n"
			}
			return s
		}
		t.Fatalf("unknown command %q", d.Cmd)
		return ""
	})
}

func resumeArg(t *testing.T, d *datadriven.TestData) (string, bool) {
	if !d.HasArg("resume") {
		return "", false
	}
	var at string
	d.ScanArgs(t, "resume", &at)
	pk, rk, _ := strings.Cut(at, "/")
	tok, err := ContinuationFromNext(pk, rk)
	require.NoError(t, err)
	return tok, true
}

// parseTestEntity parses `pk rk [name=literal ...]`.
func parseTestEntity(line string) (*Entity, error) {
	f := strings.Fields(line)
	if len(f) < 2 {
		return nil, fmt.Errorf("want pk rk [props]")
	}
	e := &Entity{PartitionKey: f[0], RowKey: f[1], Properties: map[string]any{}}
	for _, p := range f[2:] {
		name, lit, ok := strings.Cut(p, "=")
		if !ok {
			return nil, fmt.Errorf("bad property %q", p)
		}
		var v any
		switch {
		case strings.HasPrefix(lit, "'"):
			v = strings.Trim(lit, "'")
		case lit == "true" || lit == "false":
			v = lit == "true"
		case strings.HasSuffix(lit, "L"):
			n, err := strconv.ParseInt(strings.TrimSuffix(lit, "L"), 10, 64)
			if err != nil {
				return nil, err
			}
			v = n
		case strings.Contains(lit, "."):
			x, err := strconv.ParseFloat(lit, 64)
			if err != nil {
				return nil, err
			}
			v = x
		default:
			n, err := strconv.ParseInt(lit, 10, 32)
			if err != nil {
				return nil, err
			}
			v = int32(n)
		}
		e.Properties[name] = v
	}
	return e, nil
}

// formatTestEntity prints pk/rk and, with props, the properties sorted by
// name.
func formatTestEntity(e *Entity, props bool) string {
	s := e.PartitionKey + "/" + e.RowKey
	if !props {
		return s
	}
	names := make([]string, 0, len(e.Properties))
	for n := range e.Properties {
		names = append(names, n)
	}
	slices.Sort(names)
	var parts []string
	for _, n := range names {
		parts = append(parts, fmt.Sprintf("%s=%#v", n, e.Properties[n]))
	}
	return s + "{" + strings.Join(parts, " ") + "}"
}

func newQueryTestTable(t *testing.T, opts *Options, entities int) *Table {
	t.Helper()
	db := openTestDB(t, opts)
	tbl, err := db.CreateTable(ctx, "Items")
	require.NoError(t, err)
	for i := range entities {
		e := &Entity{
			PartitionKey: fmt.Sprintf("p%d", i%3),
			RowKey:       fmt.Sprintf("r%03d", i),
			Properties:   map[string]any{"N": int32(i), "S": fmt.Sprint("s", i), "B": []byte{byte(i)}},
		}
		require.NoError(t, tbl.Insert(ctx, e))
	}
	return tbl
}

func TestQueryTop(t *testing.T) {
	tbl := newQueryTestTable(t, nil, 5)
	for _, top := range []int{-1, 1001, -1000} {
		_, err := tbl.QueryPage(ctx, Query{Top: top})
		requireCode(t, err, edm.CodeInvalidInput)
		_, err = explainText(tbl, Query{Top: top})
		requireCode(t, err, edm.CodeInvalidInput)
	}
	for top, want := range map[int]int{0: 5, 1: 1, 4: 4, 1000: 5} {
		page, err := tbl.QueryPage(ctx, Query{Top: top})
		require.NoError(t, err)
		require.Len(t, page.Entities, want, "top %d", top)
		require.Equal(t, want < 5, page.Continuation != "", "top %d", top)
	}
}

func TestQueryBadInput(t *testing.T) {
	tbl := newQueryTestTable(t, nil, 5)
	for name, tc := range map[string]struct {
		q    Query
		code Code
		msg  string
	}{
		"syntax error":         {Query{Filter: "N gt and S eq 'x'"}, edm.CodeInvalidInput, "at position 5"},
		"comparing properties": {Query{Filter: "N eq S"}, edm.CodeNotImplemented, "N eq S\n  ^"},
		"bad select":           {Query{Select: []string{"1x"}}, edm.CodeInvalidInput, "1x"},
		"bad token":            {Query{Continuation: "not a token"}, edm.CodeInvalidInput, "continuation"},
		"forged token":         {Query{Continuation: encodeContinuation(planKey("p\x00", "r"), false, "")}, edm.CodeInvalidInput, "continuation token"},
	} {
		_, err := tbl.QueryPage(ctx, tc.q)
		requireCode(t, err, tc.code)
		require.Contains(t, err.Error(), tc.msg, name)
	}
	_, err := tbl.db.Table("Missing").QueryPage(ctx, Query{})
	requireCode(t, err, edm.CodeTableNotFound)
	for _, err := range tbl.db.Table("Missing").Query(ctx, Query{}) {
		requireCode(t, err, edm.CodeTableNotFound)
	}
}

func TestQueryContinuationFromAzurePair(t *testing.T) {
	tbl := newQueryTestTable(t, nil, 30)
	// Resume at an existing key and between keys; NextRowKey may be empty.
	for _, tc := range []struct{ pk, rk, first string }{
		{"p1", "r010", "p1/r010"},
		{"p1", "r011", "p1/r013"},
		{"p1", "", "p1/r001"},
		{"p2", "r999", ""},
	} {
		tok, err := ContinuationFromNext(tc.pk, tc.rk)
		require.NoError(t, err)
		page, err := tbl.QueryPage(ctx, Query{Continuation: tok, Top: 1})
		require.NoError(t, err)
		if tc.first == "" {
			require.Empty(t, page.Entities)
			require.Empty(t, page.Continuation)
			continue
		}
		require.Len(t, page.Entities, 1)
		require.Equal(t, tc.first, formatTestEntity(page.Entities[0], false))
	}
}

func TestQuerySelect(t *testing.T) {
	tbl := newQueryTestTable(t, nil, 6)
	page, err := tbl.QueryPage(ctx, Query{Filter: "PartitionKey eq 'p1'", Select: []string{"S", "Missing", "RowKey"}})
	require.NoError(t, err)
	require.Len(t, page.Entities, 2)
	for _, e := range page.Entities {
		require.Equal(t, map[string]any{"S": "s" + strings.TrimLeft(e.RowKey[1:], "0")}, e.Properties)
		require.Equal(t, "p1", e.PartitionKey)
		require.False(t, e.Timestamp.IsZero())
		require.NotEmpty(t, e.ETag)
	}
	page, err = tbl.QueryPage(ctx, Query{Filter: "RowKey eq 'r004'"})
	require.NoError(t, err)
	require.Len(t, page.Entities, 1)
	require.Equal(t, map[string]any{"N": int32(4), "S": "s4", "B": []byte{4}}, page.Entities[0].Properties)
}

// TestQueryScanBudget checks that a page that exhausts PageScanLimit
// returns what it found, possibly nothing, with a token that resumes after
// the entities it examined.
func TestQueryScanBudget(t *testing.T) {
	tbl := newQueryTestTable(t, &Options{PageScanLimit: 4}, 12)
	page, err := tbl.QueryPage(ctx, Query{Filter: "N gt 100"})
	require.NoError(t, err)
	require.Empty(t, page.Entities)
	require.NotEmpty(t, page.Continuation)
	// p0 holds r000 r003 r006 r009; four examined, so p1 is next.
	require.Equal(t, "p1", page.NextPartitionKey())
	require.Equal(t, "r001", page.NextRowKey())

	page, err = tbl.QueryPage(ctx, Query{Filter: "N eq 1 or N eq 9"})
	require.NoError(t, err)
	require.Equal(t, []string{"p0/r009"}, entityKeys(page.Entities))
	require.Equal(t, "p1/r001", page.NextPartitionKey()+"/"+page.NextRowKey())

	var all []*Entity
	for e, err := range tbl.Query(ctx, Query{Filter: "N eq 1 or N eq 9", Top: 1}) {
		require.NoError(t, err)
		all = append(all, e)
	}
	require.Equal(t, []string{"p0/r009", "p1/r001"}, entityKeys(all))
}

// TestQueryTimeBudget checks PageTimeLimit with a clock that advances one
// second per reading.
func TestQueryTimeBudget(t *testing.T) {
	var now atomic.Int64
	clock := func() time.Time { return time.Unix(now.Add(1), 0) }
	tbl := newQueryTestTable(t, &Options{Clock: clock, PageTimeLimit: time.Second}, 3*engine.BudgetCheckEvery+5)
	page, err := tbl.QueryPage(ctx, Query{})
	require.NoError(t, err)
	require.Len(t, page.Entities, engine.BudgetCheckEvery)
	require.NotEmpty(t, page.Continuation)
	n := 0
	for _, err := range tbl.Query(ctx, Query{}) {
		require.NoError(t, err)
		n++
	}
	require.Equal(t, 3*engine.BudgetCheckEvery+5, n)
}

// countdownCtx reports Canceled once Err has been called n times.
type countdownCtx struct {
	context.Context
	n atomic.Int64
}

func (c *countdownCtx) Err() error {
	if c.n.Add(-1) < 0 {
		return context.Canceled
	}
	return nil
}

func TestQueryContextCancel(t *testing.T) {
	tbl := newQueryTestTable(t, nil, 4*engine.BudgetCheckEvery)
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	_, err := tbl.QueryPage(cancelled, Query{})
	require.ErrorIs(t, err, context.Canceled)

	// Cancelled during the scan: the first checks pass, a later one fails.
	c := &countdownCtx{Context: ctx}
	c.n.Store(3)
	_, err = tbl.QueryPage(c, Query{Filter: "N lt 0"})
	require.ErrorIs(t, err, context.Canceled)

	c.n.Store(3)
	var n int
	for _, err = range tbl.Query(c, Query{Top: 10}) {
		if err != nil {
			break
		}
		n++
	}
	require.ErrorIs(t, err, context.Canceled)
	require.Less(t, n, 4*engine.BudgetCheckEvery)
}

func TestQueryClosed(t *testing.T) {
	db, err := OpenInMemory(nil)
	require.NoError(t, err)
	tbl, err := db.CreateTable(ctx, "Items")
	require.NoError(t, err)
	require.NoError(t, db.Close())
	_, err = tbl.QueryPage(ctx, Query{})
	require.True(t, errors.Is(err, ErrClosed), "%v", err)
}

func TestQueryPlanKinds(t *testing.T) {
	tbl := newQueryTestTable(t, nil, 0)
	for filter, want := range map[string]PlanKind{
		"PartitionKey eq 'a' and RowKey eq '1'":                   PlanPoint,
		"PartitionKey eq 'a' and RowKey ge '1' and RowKey lt '2'": PlanRange,
		"PartitionKey eq 'a' and N eq 1":                          PlanPartitionScan,
		"N eq 1":                                                  PlanTableScan,
		"PartitionKey eq 'a' and PartitionKey eq 'b'":             PlanEmpty,
	} {
		p, err := tbl.Plan(ctx, Query{Filter: filter})
		require.NoError(t, err)
		require.Equal(t, want, p.Kind, filter)
		require.Equal(t, "plan: "+want.String()+"\n", strings.SplitAfter(p.String(), "\n")[0])
	}
	require.Equal(t, []string{"point", "range", "partition scan", "table scan", "empty"},
		[]string{PlanPoint.String(), PlanRange.String(), PlanPartitionScan.String(), PlanTableScan.String(), PlanEmpty.String()})
}

func entityKeys(es []*Entity) []string {
	var out []string
	for _, e := range es {
		out = append(out, e.PartitionKey+"/"+e.RowKey)
	}
	return out
}

func planKey(pk, rk string) plan.Key { return plan.Key{PartitionKey: pk, RowKey: rk} }

// TestFilterErrorKeepsPosition checks that a rejected $filter's
// *filter.Error, with its position, is reachable through the *Error.
func TestFilterErrorKeepsPosition(t *testing.T) {
	db, err := OpenInMemory(nil)
	require.NoError(t, err)
	defer db.Close()
	ctx := context.Background()
	tbl, err := db.CreateTable(ctx, "Errors")
	require.NoError(t, err)
	_, err = tbl.QueryPage(ctx, Query{Filter: "Age gt and X eq 1"})
	var fe *filter.Error
	require.ErrorAs(t, err, &fe)
	require.Equal(t, 7, fe.Pos)
	require.ErrorIs(t, err, ErrInvalidInput)
	require.Equal(t, edm.CodeInvalidInput, ErrorCode(err))
	_, err = tbl.QueryPage(ctx, Query{Filter: "Age gt Size"})
	require.ErrorAs(t, err, &fe)
	require.ErrorIs(t, err, ErrNotImplemented)
}

// TestQueryPageCost checks what pages report they read: every entity of
// the planned ranges once across a query's pages, and through an index
// only the entities its entries name.
func TestQueryPageCost(t *testing.T) {
	tbl := newQueryTestTable(t, nil, 30) // p0, p1, p2: 10 entities each
	require.NoError(t, tbl.CreateIndex(ctx, IndexSpec{Name: "ByS", Properties: []string{"S"}}))
	cases := []struct {
		name, filter       string
		top                int
		examined, returned int
		entries            int
	}{
		{"table scan", "N ge 10 and N lt 13", 0, 30, 3, 0},
		{"partition scan", "PartitionKey eq 'p1' and N gt 20", 0, 10, 3, 0},
		{"range", "PartitionKey eq 'p1' and RowKey ge 'r010' and RowKey lt 'r020'", 0, 4, 4, 0},
		{"point", "PartitionKey eq 'p2' and RowKey eq 'r002'", 0, 1, 1, 0},
		{"point missing", "PartitionKey eq 'p2' and RowKey eq 'r001'", 0, 0, 0, 0},
		{"index", "S eq 's7' or S eq 's8'", 0, 2, 2, 2},
		{"index with residual", "S eq 's7' and N gt 7", 0, 1, 0, 1},
		{"paged table scan", "N ge 0", 7, 30, 30, 0},
		{"paged sparse scan", "N eq 4 or N eq 25", 1, 30, 2, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var examined, entries, returned int
			q := Query{Filter: tc.filter, Top: tc.top}
			for {
				page, err := tbl.QueryPage(ctx, q)
				require.NoError(t, err)
				require.GreaterOrEqual(t, page.Examined, len(page.Entities))
				examined += page.Examined
				entries += page.IndexEntries
				returned += len(page.Entities)
				if page.Continuation == "" {
					break
				}
				q.Continuation = page.Continuation
			}
			require.Equal(t, tc.examined, examined, "examined")
			require.Equal(t, tc.entries, entries, "index entries")
			require.Equal(t, tc.returned, returned, "returned")
		})
	}

	page, err := QueryStructPage[struct{ N int32 }](ctx, tbl, Query{Filter: "PartitionKey eq 'p0'"})
	require.NoError(t, err)
	require.Equal(t, PageCost{Examined: 10}, page.PageCost)
}

// hintRecordingTable records the PreviousExamined hint of every query
// page it is asked for.
type hintRecordingTable struct {
	driver.Table
	hints *[]int
}

func (t hintRecordingTable) QueryPage(ctx context.Context, q *driver.QueryRequest, emit func(driver.Row) error) (driver.PageResult, error) {
	*t.hints = append(*t.hints, q.PreviousExamined)
	return t.Table.QueryPage(ctx, q, emit)
}

// TestQueryPreviousExaminedHint checks that the query iterator tells the
// driver, with each page after the first, how many entities the previous
// page examined, and that a page read alone (QueryPage) carries no hint.
func TestQueryPreviousExaminedHint(t *testing.T) {
	ctx := context.Background()
	inner, err := OpenInMemory(nil)
	require.NoError(t, err)
	var hints []int
	record := func(inner driver.Table) driver.Table { return hintRecordingTable{inner, &hints} }
	db, err := OpenDriver(wrappingConn{Conn: inner.conn, wrap: record}, nil)
	require.NoError(t, err)
	defer db.Close()
	tb, err := db.CreateTable(ctx, "Hints")
	require.NoError(t, err)
	for i := range 250 {
		require.NoError(t, tb.Insert(ctx, &Entity{PartitionKey: "p", RowKey: fmt.Sprintf("r%03d", i),
			Properties: map[string]any{"N": int32(i % 2)}}))
	}
	// Every other entity matches: a page of 50 examines about 100.
	q := Query{Filter: "N eq 0", Top: 50}
	n := 0
	for _, err := range tb.Query(ctx, q) {
		require.NoError(t, err)
		n++
	}
	require.Equal(t, 125, n)
	// Three pages: 50 matches in r000-r098, 50 in r099-r198, 25 after.
	require.Equal(t, []int{0, 99, 100}, hints)

	hints = hints[:0]
	page, err := tb.QueryPage(ctx, q)
	require.NoError(t, err)
	q.Continuation = page.Continuation
	_, err = tb.QueryPage(ctx, q)
	require.NoError(t, err)
	require.Equal(t, []int{0, 0}, hints)
}

func TestContinuationRoundTrip(t *testing.T) {
	for _, k := range []plan.Key{
		{PartitionKey: "", RowKey: "x"},
		{PartitionKey: "p", RowKey: ""},
		{PartitionKey: "Sales", RowKey: "2024-01-01"},
		{PartitionKey: "ünïcødé 日本", RowKey: "🙂 with spaces "},
		{PartitionKey: strings.Repeat("p", 1024), RowKey: strings.Repeat("r", 1024)},
	} {
		for _, reverse := range []bool{false, true} {
			got, rev, table, err := decodeContinuation(encodeContinuation(k, reverse, "42"))
			if err != nil || got != k || rev != reverse || table != "42" {
				t.Fatalf("round trip of %q (reverse %v): got %q, %v, %v", k, reverse, got, rev, err)
			}
		}
		tok := encodeContinuation(k, false, "")
		p := &Page{Continuation: tok}
		if p.NextPartitionKey() != k.PartitionKey || p.NextRowKey() != k.RowKey {
			t.Fatalf("Next pair of %q: got (%q, %q)", k, p.NextPartitionKey(), p.NextRowKey())
		}
		fromPair, err := ContinuationFromNext(k.PartitionKey, k.RowKey)
		if err != nil || fromPair != tok {
			t.Fatalf("ContinuationFromNext(%q): got %q, %v; want %q", k, fromPair, err, tok)
		}
	}
}

func TestContinuationFromNext(t *testing.T) {
	tok, err := ContinuationFromNext("", "")
	if tok != "" || err != nil {
		t.Fatalf("empty pair: got %q, %v", tok, err)
	}
	for _, pair := range [][2]string{
		{"a\x00b", "r"},
		{"p", "r\n"},
		{"p/q", "r"},
		{"p", "r#"},
		{"p", "\xff"},
		{"p", strings.Repeat("r", maxContinuationKeyBytes+1)},
	} {
		_, err := ContinuationFromNext(pair[0], pair[1])
		if !errors.Is(err, ErrInvalidInput) {
			t.Errorf("ContinuationFromNext(%q, %q): got %v, want InvalidInput", pair[0], pair[1], err)
		}
	}
	if p := (&Page{}); p.NextPartitionKey() != "" || p.NextRowKey() != "" {
		t.Fatalf("complete page has a next position")
	}
}

// forge builds a token with a valid checksum around any body.
func forge(body []byte) string {
	b := append([]byte(nil), body...)
	b = binary.BigEndian.AppendUint32(b, crc32.Checksum(b, crc32c))
	return base64.RawURLEncoding.EncodeToString(b)
}

func TestBadContinuation(t *testing.T) {
	good := encodeContinuation(plan.Key{PartitionKey: "p", RowKey: "r"}, false, "")
	flipped := []byte(good)
	flipped[3] ^= 1
	for name, tok := range map[string]string{
		"not base64":          "!!!",
		"padding":             good + "==",
		"too short":           base64.RawURLEncoding.EncodeToString([]byte{1, 0}),
		"flipped bit":         string(flipped),
		"truncated":           good[:len(good)-2],
		"wrong version":       forge([]byte{9, 1, 'p', 'r'}),
		"length past end":     forge([]byte{1, 9, 'p', 'r'}),
		"overlong varint":     forge([]byte{1, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}),
		"control in key":      forge([]byte{1, 2, 'p', 0, 'r'}),
		"table escape":        forge([]byte{1, 1, 0xff, 0x00, 0x00, 0x00, 0x01}),
		"invalid utf-8":       forge([]byte{1, 1, 0xc3, 'r'}),
		"forbidden character": forge([]byte{1, 1, '?', 'r'}),
		"huge":                strings.Repeat("A", 1<<16),
	} {
		_, _, _, err := decodeContinuation(tok)
		if !errors.Is(err, ErrInvalidInput) {
			t.Errorf("%s: got %v, want InvalidInput", name, err)
		}
	}
}

// FuzzContinuation checks that decoding never panics, accepts only
// positions that obey the key rules, and that accepted tokens re-encode to
// a token decoding to the same position.
func FuzzContinuation(f *testing.F) {
	f.Add(encodeContinuation(plan.Key{PartitionKey: "p", RowKey: "r"}, false, ""))
	f.Add(encodeContinuation(plan.Key{PartitionKey: "", RowKey: "x"}, true, "7"))
	f.Add("")
	f.Add("AQ")
	f.Add(forge([]byte{1, 1, 'p', 0, 'r'}))
	f.Fuzz(func(t *testing.T, tok string) {
		k, reverse, table, err := decodeContinuation(tok)
		if err != nil {
			if !errors.Is(err, ErrInvalidInput) {
				t.Fatalf("error %v is not InvalidInput", err)
			}
			return
		}
		if checkContinuationKey(k.PartitionKey) != "" || checkContinuationKey(k.RowKey) != "" {
			t.Fatalf("accepted a position that breaks the key rules: %q", k)
		}
		again, rev, againTable, err := decodeContinuation(encodeContinuation(k, reverse, table))
		if err != nil || again != k || rev != reverse || againTable != table {
			t.Fatalf("re-encoding %q gives %q, %v", k, again, err)
		}
	})
}

func TestSegments(t *testing.T) {
	tb := partitionTable(t, 50)
	for _, n := range []int{1, 2, 3, 8, 200} {
		segs, err := tb.Segments(ctx, n)
		require.NoError(t, err)
		require.Len(t, segs, n)
		pk, rk := segs[0].Start()
		require.Equal(t, [2]string{"", ""}, [2]string{pk, rk})
		_, _, bounded := segs[n-1].End()
		require.False(t, bounded)
		// Each segment on its own goroutine; together every entity once.
		got := make([][]string, n)
		var wg sync.WaitGroup
		for i, s := range segs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for e, err := range tb.Query(ctx, Query{Segment: s, Top: 7, Filter: "N ge 10"}) {
					if err != nil {
						t.Error(err)
						return
					}
					got[i] = append(got[i], e.PartitionKey+"/"+e.RowKey)
				}
			}()
		}
		wg.Wait()
		var all []string
		sizes := make([]int, n)
		for i, g := range got {
			all = append(all, g...)
			sizes[i] = len(g)
		}
		var want []string
		for e, err := range tb.Query(ctx, Query{Filter: "N ge 10"}) {
			require.NoError(t, err)
			want = append(want, e.PartitionKey+"/"+e.RowKey)
		}
		require.Equal(t, want, all, "n %d", n)
		if n <= 8 {
			lo, hi := len(want), 0
			for _, s := range sizes {
				lo, hi = min(lo, s), max(hi, s)
			}
			require.LessOrEqual(t, hi-lo, 2*50/n+1, "n %d: sizes %v", n, sizes)
		}
	}
	segs, err := tb.Segments(ctx, 2)
	require.NoError(t, err)
	plan, err := tb.Plan(ctx, Query{Segment: segs[1], Filter: "PartitionKey eq 'c'"})
	require.NoError(t, err)
	require.Equal(t, PlanPartitionScan, plan.Kind)
	text, err := explainText(tb, Query{Segment: segs[0]})
	require.NoError(t, err)
	require.Equal(t, "plan: table scan\nranges:\n  (PartitionKey, RowKey) < ('b', 'r25')\nresidual: none\n", text)
	for _, n := range []int{0, -1, MaxSegments + 1} {
		_, err := tb.Segments(ctx, n)
		requireCode(t, err, edm.CodeInvalidInput)
	}
	other, err := tb.db.CreateTable(ctx, "other")
	require.NoError(t, err)
	_, err = other.QueryPage(ctx, Query{Segment: segs[0]})
	requireCode(t, err, edm.CodeInvalidInput)
	_, err = tb.db.Table("missing").Segments(ctx, 2)
	requireCode(t, err, edm.CodeTableNotFound)
	empty, err := other.Segments(ctx, 3)
	require.NoError(t, err)
	for _, s := range empty {
		page, err := other.QueryPage(ctx, Query{Segment: s})
		require.NoError(t, err)
		require.Empty(t, page.Entities)
	}

	db, err := OpenDriver(failingConn{&driver.Error{Code: edm.CodeInternalError, Message: "unused"}}, nil)
	require.NoError(t, err)
	_, err = db.Table("t").Segments(ctx, 2)
	requireCode(t, err, edm.CodeNotImplemented)
}

// TestPlanWarnings: Plan (and its String) warns of a literal of a type the
// property never has in the sampled entities and of a name seen only in
// another case; the query still runs and returns nothing; a filter that
// can match, an empty table and a partition without such entities warn of
// nothing; index properties count as seen names.
func TestPlanWarnings(t *testing.T) {
	ctx := context.Background()
	db := openTestDB(t, nil)
	tb, err := db.CreateTable(ctx, "Orders")
	require.NoError(t, err)

	q := Query{Filter: "Amount gt '5'"}
	p, err := tb.Plan(ctx, q)
	require.NoError(t, err)
	require.Empty(t, p.Warnings, "an empty table has nothing to warn of")

	for i := range 3 {
		require.NoError(t, tb.Insert(ctx, &Entity{PartitionKey: "p", RowKey: fmt.Sprint(i),
			Properties: map[string]any{"Amount": int32(i * 10), "Status": "new"}}))
	}
	require.NoError(t, tb.Insert(ctx, &Entity{PartitionKey: "q", RowKey: "0", Properties: map[string]any{"Other": true}}))

	p, err = tb.Plan(ctx, q)
	require.NoError(t, err)
	require.Equal(t, []string{"Amount is compared (gt) with a literal of type Edm.String but was seen only as Edm.Int32: such a comparison matches nothing"}, p.Warnings)
	text, err := explainText(tb, q)
	require.NoError(t, err)
	require.True(t, strings.HasSuffix(text, "residual: Amount gt '5'\nwarning: "+p.Warnings[0]+"\n"), text)
	n := 0
	for _, err := range tb.Query(ctx, q) {
		require.NoError(t, err)
		n++
	}
	require.Zero(t, n, "the results stay Azure's")

	p, err = tb.Plan(ctx, Query{Filter: "status eq 'new'"})
	require.NoError(t, err)
	require.Equal(t, []string{"property status was never seen, but Status was: names are case-sensitive, so status eq ... matches nothing"}, p.Warnings)

	p, err = tb.Plan(ctx, Query{Filter: "Amount gt 5 and Status eq 'new'"})
	require.NoError(t, err)
	require.Empty(t, p.Warnings)

	// The sample is the plan's key ranges: partition q has no Amount.
	p, err = tb.Plan(ctx, Query{Filter: "PartitionKey eq 'q' and Amount gt '5'"})
	require.NoError(t, err)
	require.Empty(t, p.Warnings)
	p, err = tb.Partition("p").Plan(ctx, Query{Filter: "Amount gt '5'"})
	require.NoError(t, err)
	require.Len(t, p.Warnings, 1)

	// A name an index covers is a known name.
	require.NoError(t, tb.CreateIndex(ctx, IndexSpec{Name: "ByState", Properties: []string{"status"}}))
	p, err = tb.Plan(ctx, Query{Filter: "status eq 'new'"})
	require.NoError(t, err)
	require.Empty(t, p.Warnings)
}

// explainText is the String of p's plan for q, or Plan's error.
func explainText(p interface {
	Plan(context.Context, Query) (*QueryPlan, error)
}, q Query) (string, error) {
	qp, err := p.Plan(context.Background(), q)
	if err != nil {
		return "", err
	}
	return qp.String(), nil
}
