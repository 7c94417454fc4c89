package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tablestore/tablestore"
)

// indexStore makes a store whose table People holds n entities with
// distinct Email values and Team values t0, t1, t2.
func indexStore(t *testing.T, n int) string {
	t.Helper()
	dir := t.TempDir()
	store := filepath.Join(dir, "store")
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, `{"PartitionKey":"p%d","RowKey":"%05d","Email":"u%d@example.com","Team":"t%d"}`+"\n", i%10, i, i, i%3)
	}
	ok(t, "import", "--store", store, "People", writeFile(t, dir, "in.jsonl", b.String()))
	return store
}

func TestIndexCommand(t *testing.T) {
	store := indexStore(t, 2000)
	require.Equal(t, "(no indexes)\n", ok(t, "index", "--store", store, "list").stdout)
	require.Equal(t, "(table People has no indexes)\n", ok(t, "index", "--store", store, "list", "People").stdout)

	r := ok(t, "index", "--store", store, "create", "People", "ByEmail", "Email", "--unique")
	require.Empty(t, r.stdout)
	require.Regexp(t, `^index ByEmail ready: 2,000 entities in \S+ \([0-9,]+ entities/s\)\n$`, r.stderr)
	ok(t, "index", "--store", store, "create", "--partitioned", "People", "ByTeam", "Team", "Email")

	r = ok(t, "index", "--store", store, "list")
	require.Regexp(t, `(?m)^TABLE\s+INDEX\s+PROPERTIES\s+PARTITIONED\s+UNIQUE\s+STATE\s+PROGRESS\s+ENTRIES\s+BYTES$`, r.stdout)
	require.Regexp(t, `(?m)^People\s+ByEmail\s+Email\s+no\s+yes\s+ready\s+-\s+~[0-9,]+\s+~[0-9.]+ (B|KiB)$`, r.stdout)
	require.Regexp(t, `(?m)^People\s+ByTeam\s+Team,Email\s+yes\s+no\s+ready\s+-\s+~[0-9,]+\s+~[0-9.]+ (B|KiB)$`, r.stdout)
	require.True(t, strings.HasSuffix(r.stdout, "\n"+statsFootnote+"\n"), r.stdout)

	r = ok(t, "index", "--store", store, "list", "People", "--json")
	var rows []indexRow
	for _, line := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		var row indexRow
		require.NoError(t, json.Unmarshal([]byte(line), &row), line)
		rows = append(rows, row)
	}
	require.Len(t, rows, 2)
	require.Equal(t, []string{"ByEmail", "ByTeam"}, []string{rows[0].Name, rows[1].Name})
	require.Equal(t, []string{"Team", "Email"}, rows[1].Properties)
	require.True(t, rows[0].Unique)
	require.True(t, rows[1].Partitioned)
	require.Equal(t, "ready", rows[0].State)
	// Opening the store for list replayed the builds' writes into files,
	// so the estimates see the entries.
	for _, row := range rows {
		require.Greater(t, row.EstimatedEntries, int64(0), row.Name)
		require.Greater(t, row.EstimatedBytes, int64(0), row.Name)
	}

	// Queries use the index; stats shows its size under its table.
	r = ok(t, "explain", "--store", store, "People", "--filter", "Email eq 'u7@example.com'")
	require.Contains(t, r.stdout, "plan: index ByEmail (Email)")
	r = ok(t, "query", "--store", store, "People", "--filter", "Email eq 'u7@example.com'")
	require.Equal(t, 1, strings.Count(r.stdout, "\n"))
	require.Contains(t, r.stdout, `"RowKey":"00007"`)
	r = ok(t, "stats", "--store", store)
	require.Regexp(t, `(?m)^People\s+~[0-9,]+\s+~[0-9.]+ (B|KiB)\n  index ByEmail\s+~[0-9,]+\s+~[0-9.]+ (B|KiB)\n  index ByTeam\s+~[0-9,]+\s+~[0-9.]+ (B|KiB)$`, r.stdout)
	r = ok(t, "stats", "--store", store, "--json")
	require.Regexp(t, `"indexes":\[\{"name":"ByEmail","estimatedEntries":[1-9][0-9]*,"estimatedBytes":[1-9][0-9]*\},\{"name":"ByTeam",`, r.stdout)

	for _, tc := range []struct {
		args []string
		code int
		err  string
	}{
		{[]string{"create", "People", "ByEmail", "Team"}, exitFail, `InvalidInput: table "People" already has an index named "ByEmail"`},
		{[]string{"create", "People", "BYEMAIL", "Team"}, exitFail, "already has an index"},
		{[]string{"create", "Nobody", "ByX", "X"}, exitFail, `TableNotFound: table "Nobody" does not exist`},
		{[]string{"create", "People", "ByT", "Team", "--unique"}, exitFail, `EntityAlreadyExists: unique index "ByT" cannot be built`},
		{[]string{"create", "People", "9lives", "Team"}, exitFail, "InvalidInput: the index name"},
		{[]string{"create", "People", "ByPK", "PartitionKey"}, exitFail, "InvalidInput: index ByPK cannot index PartitionKey"},
		{[]string{"create", "People", "ByMany", "A", "B", "C", "D", "E"}, exitFail, "InvalidInput: index ByMany has 5 properties"},
		{[]string{"drop", "People", "Nope"}, exitFail, `ResourceNotFound: table "People" has no index named "Nope"`},
		{[]string{"drop", "Nobody", "ByEmail"}, exitFail, "TableNotFound"},
		{[]string{"list", "Nobody"}, exitFail, "TableNotFound"},
		{nil, exitUsage, "want create, drop or list"},
		{[]string{"rebuild"}, exitUsage, `unknown index action "rebuild"`},
		{[]string{"create", "People", "ByX"}, exitUsage, "want TABLE NAME PROPERTY... after create"},
		{[]string{"drop", "People"}, exitUsage, "want TABLE NAME after drop"},
		{[]string{"list", "People", "Other"}, exitUsage, "at most one TABLE"},
		{[]string{"list", "--unique"}, exitUsage, "--partitioned and --unique go with create"},
	} {
		r := cli(t, append([]string{"index", "--store", store}, tc.args...)...)
		require.Equal(t, tc.code, r.code, "index %s\nstderr: %s", strings.Join(tc.args, " "), r.stderr)
		require.Contains(t, r.stderr, tc.err, "index %s", strings.Join(tc.args, " "))
	}
	// The failed unique build left nothing behind.
	r = ok(t, "index", "--store", store, "list", "People")
	require.Equal(t, 2+2, strings.Count(r.stdout, "\n"), r.stdout)
	require.NotContains(t, r.stdout, "ByT ")

	ok(t, "index", "--store", store, "drop", "People", "byemail")
	r = ok(t, "index", "--store", store, "list", "People")
	require.NotContains(t, r.stdout, "ByEmail")
	require.Contains(t, r.stdout, "ByTeam")
	r = ok(t, "explain", "--store", store, "People", "--filter", "Email eq 'u7@example.com'")
	require.NotContains(t, r.stdout, "index")
	require.Equal(t, exitFail, cli(t, "index", "--store", store, "drop", "People", "ByEmail").code)
}

// TestIndexCreateTerminal runs a build with the progress line on: it
// is cleared and the summary printed.
func TestIndexCreateTerminal(t *testing.T) {
	store := indexStore(t, 500)
	var out, errb bytes.Buffer
	io := &stdio{stdin: strings.NewReader(""), stdout: &out, stderr: &errb, errTerminal: true, errWidth: 100}
	code := run(context.Background(), []string{"index", "--store", store, "create", "People", "ByEmail", "Email"}, io)
	require.Equal(t, exitOK, code, errb.String())
	require.Regexp(t, `\r\x1b\[Kindex ByEmail ready: 500 entities in `, errb.String())

	// A failing build prints its error and no summary.
	errb.Reset()
	code = run(context.Background(), []string{"index", "--store", store, "create", "People", "ByTeam", "Team", "--unique"}, io)
	require.Equal(t, exitFail, code)
	require.NotContains(t, errb.String(), "ByTeam ready")
	require.Contains(t, errb.String(), "EntityAlreadyExists")
}

// TestIndexBuildLiveLine redraws the line often enough to see a build of
// a few thousand entities go by: the line shows the index's progress.
func TestIndexBuildLiveLine(t *testing.T) {
	store := indexStore(t, 5000)
	defer func(d time.Duration) { progressEvery = d }(progressEvery)
	progressEvery = time.Millisecond
	var out, errb bytes.Buffer
	io := &stdio{stdin: strings.NewReader(""), stdout: &out, stderr: &errb, errTerminal: true, errWidth: 200}
	code := run(context.Background(), []string{"index", "--store", store, "create", "People", "ByEmail", "Email", "--unique"}, io)
	require.Equal(t, exitOK, code, errb.String())
	require.Regexp(t, `\rindex ByEmail: [0-9,]+ entities of 5,000, [0-9,]+ entities/s`, errb.String())
	require.Regexp(t, `index ByEmail ready: 5,000 entities in `, errb.String())
}

// TestBuildProgressLine checks the live line of a build as set from the
// index's progress.
func TestBuildProgressLine(t *testing.T) {
	p := &progress{label: "index ByEmail", start: time.Now().Add(-2 * time.Second)}
	p.set(250, 1000)
	line := p.line()
	require.Contains(t, line, "index ByEmail: 250 entities of 1,000, ")
	require.Contains(t, line, "entities/s, 25%, ")
	p.set(1000, 4000) // the total grows as writes add entities
	require.Contains(t, p.line(), "1,000 entities of 4,000, ")

	require.Equal(t, "-", buildProgress(indexRow{State: "ready", Done: 5, Total: 5}))
	require.Equal(t, "1,500 of 3,000 (50%)", buildProgress(indexRow{State: "building", Done: 1500, Total: 3000}))
	require.Equal(t, "7", buildProgress(indexRow{State: "building", Done: 7}))
}

func TestQueryStats(t *testing.T) {
	store := indexStore(t, 2000)
	// Without an index, an equality on a property examines every entity.
	r := ok(t, "query", "--store", store, "People", "--filter", "Email eq 'u7@example.com'", "--stats")
	require.Equal(t, 1, strings.Count(r.stdout, "\n"))
	require.Equal(t, "stats: 1 page, 2,000 entities examined, 0 index entries read, 1 returned\nplan: table scan\n", r.stderr)

	ok(t, "index", "--store", store, "create", "People", "ByEmail", "Email")
	r = ok(t, "query", "--store", store, "People", "--filter", "Email eq 'u7@example.com'", "--stats")
	require.Equal(t, 1, strings.Count(r.stdout, "\n"))
	require.Equal(t, "stats: 1 page, 1 entity examined, 1 index entry read, 1 returned\nplan: table scan through index ByEmail (Email)\n", r.stderr)

	// Pages add up; the continuation line comes before the figures.
	r = ok(t, "query", "--store", store, "People", "--filter", "PartitionKey eq 'p3'", "--top", "150", "--stats")
	require.Equal(t, 150, strings.Count(r.stdout, "\n"))
	lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
	require.Len(t, lines, 3, r.stderr)
	require.Contains(t, lines[0], "more entities match")
	require.Equal(t, "stats: 1 page, 150 entities examined, 0 index entries read, 150 returned", lines[1])
	require.Equal(t, "plan: partition scan", lines[2])
	r = ok(t, "query", "--store", store, "People", "--all", "--stats", "--select", "Email")
	require.Equal(t, 2000, strings.Count(r.stdout, "\n"))
	require.Equal(t, "stats: 2 pages, 2,000 entities examined, 0 index entries read, 2,000 returned\nplan: table scan\n", r.stderr)

	// --index reads in the index's order.
	r = ok(t, "query", "--store", store, "People", "--index", "ByEmail", "--filter", "Email ge 'u1998'", "--select", "Email", "--stats")
	require.Equal(t, []string{"u1998@example.com", "u1999@example.com", "u199@example.com", "u19@example.com", "u1@example.com"}, // byte order: "9" < "@"
		emails(t, r.stdout)[:5])
	require.Contains(t, r.stderr, "plan: table scan through index ByEmail (Email), index order\n")
	r = ok(t, "explain", "--store", store, "People", "--index", "ByEmail", "--filter", "Email ge 'u1998'")
	require.Contains(t, r.stdout, "plan: index ByEmail (Email), index order")
	r = cli(t, "query", "--store", store, "People", "--index", "Nope")
	require.Equal(t, exitFail, r.code)
	require.Contains(t, r.stderr, `ResourceNotFound: table "People" has no index named "Nope"`)
	require.NotContains(t, r.stderr, "stats:")
}

// emails returns the Email of each JSON line.
func emails(t *testing.T, out string) []string {
	t.Helper()
	var es []string
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var e struct{ Email string }
		require.NoError(t, json.Unmarshal([]byte(line), &e), line)
		es = append(es, e.Email)
	}
	return es
}

// TestQueryStatsUnknown checks that a page whose cost the store cannot
// tell (the remote driver) makes the totals unknown for good.
func TestQueryStatsUnknown(t *testing.T) {
	var st queryStats
	st.add(&tablestore.Page{Entities: make([]*tablestore.Entity, 3), PageCost: tablestore.PageCost{Examined: 10, IndexEntries: 0}})
	require.Equal(t, queryStats{pages: 1, returned: 3, examined: 10}, st)
	st.add(&tablestore.Page{Entities: make([]*tablestore.Entity, 2), PageCost: tablestore.PageCost{Examined: -1, IndexEntries: -1}})
	st.add(&tablestore.Page{PageCost: tablestore.PageCost{Examined: 4, IndexEntries: 4}})
	require.Equal(t, queryStats{pages: 3, returned: 5, examined: -1, indexEntries: -1}, st)
}
