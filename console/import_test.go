package console

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tablestore/tablestore"
	"github.com/tablestore/tablestore/edm"
)

// runImport starts an import and sends data in chunks of size n, as the
// script does, returning the last status.
func runImport(t *testing.T, h *harness, table, format, mode, onError, data string, n int) importStatus {
	t.Helper()
	status, body := h.postRaw("/tables/"+table+"/import", "application/x-www-form-urlencoded",
		url.Values{"format": {format}, "mode": {mode}, "onerror": {onError}}.Encode())
	require.Equal(t, http.StatusCreated, status, body)
	var started struct{ ID string }
	require.NoError(t, json.Unmarshal([]byte(body), &started))
	var st importStatus
	for off := 0; ; {
		end := min(off+n, len(data))
		last := "0"
		if end == len(data) {
			last = "1"
		}
		status, body = h.postRaw(fmt.Sprintf("/tables/%s/import/%s?offset=%d&last=%s", table, started.ID, off, last),
			"application/octet-stream", data[off:end])
		require.Equal(t, http.StatusOK, status, body)
		require.NoError(t, json.Unmarshal([]byte(body), &st))
		require.Equal(t, int64(end), st.Received)
		off = end
		if st.Done {
			return st
		}
		require.Less(t, off, len(data)+1, "not done at the end")
	}
}

func count(t *testing.T, tb *tablestore.Table) int {
	t.Helper()
	n := 0
	for _, err := range tb.Query(context.Background(), tablestore.Query{}) {
		require.NoError(t, err)
		n++
	}
	return n
}

func TestImportJSONLines(t *testing.T) {
	ctx := context.Background()
	h := newHarness(t, nil)
	tb := h.table("People")
	h.login()
	status, body, _ := h.get("/tables/People/import")
	require.Equal(t, http.StatusOK, status)
	require.Contains(t, body, `id="import-progress"`)

	var sb strings.Builder
	sb.WriteString("\ufeff")
	for i := range 250 {
		pk := fmt.Sprintf("p%d", i/120) // 120 per partition: more than one transaction each
		fmt.Fprintf(&sb, `{"PartitionKey":%q,"RowKey":"%04d","N":%d,"Big@odata.type":"Edm.Int64","Big":"%d","Name":"n\u00e9%d"}`+"\r\n",
			pk, i, i, int64(i)<<40, i)
		if i == 7 {
			sb.WriteString("\n   \n") // blank lines are skipped
		}
	}
	sb.WriteString(`{"PartitionKey":"last","RowKey":"x"}`) // no final line break
	data := sb.String()
	for _, chunk := range []int{7, 1000, len(data)} { // chunks cut lines anywhere
		require.NoError(t, h.db.DeleteTable(ctx, "People"))
		_, err := h.db.CreateTable(ctx, "People")
		require.NoError(t, err)
		st := runImport(t, h, "People", "jsonl", "insert", "stop", data, chunk)
		require.False(t, st.Stopped, "%+v", st)
		require.Equal(t, int64(251), st.Imported)
		require.Zero(t, st.Rejected)
		require.Equal(t, 253, st.Lines)
		require.Equal(t, 251, count(t, tb))
	}
	e, err := tb.Get(ctx, "p1", "0130", nil)
	require.NoError(t, err)
	require.Equal(t, map[string]any{"N": int32(130), "Big": int64(130) << 40, "Name": "né130"}, e.Properties)

	// Upsert replaces; insert of the same entities fails at the first.
	st := runImport(t, h, "People", "jsonl", "upsert", "stop", `{"PartitionKey":"p0","RowKey":"0001","X":true}`, 100)
	require.Equal(t, int64(1), st.Imported)
	e, err = tb.Get(ctx, "p0", "0001", nil)
	require.NoError(t, err)
	require.Equal(t, map[string]any{"X": true}, e.Properties)
	st = runImport(t, h, "People", "jsonl", "upsert-merge", "stop", `{"PartitionKey":"p0","RowKey":"0001","Y":1}`, 100)
	require.Equal(t, int64(1), st.Imported)
	e, err = tb.Get(ctx, "p0", "0001", nil)
	require.NoError(t, err)
	require.Equal(t, map[string]any{"X": true, "Y": int32(1)}, e.Properties)
}

func TestImportStopsAtABadRecord(t *testing.T) {
	h := newHarness(t, nil)
	tb := h.table("People")
	h.login()
	lines := []string{
		`{"PartitionKey":"a","RowKey":"1"}`,
		`{"PartitionKey":"a","RowKey":"2"}`,
		`{"PartitionKey":"a","RowKey":"3","Bad":{"nested":1}}`, // line 3: not an entity
		`{"PartitionKey":"a","RowKey":"4"}`,
	}
	st := runImport(t, h, "People", "jsonl", "insert", "stop", strings.Join(lines, "\n"), 1<<20)
	require.True(t, st.Done)
	require.True(t, st.Stopped)
	require.Equal(t, int64(2), st.Imported, "the lines before it are committed")
	require.Equal(t, int64(1), st.Rejected)
	require.Len(t, st.Issues, 1)
	require.Equal(t, 3, st.Issues[0].Line)
	require.NotEmpty(t, st.Issues[0].Message)
	require.Equal(t, 2, count(t, tb), "nothing at or after it")

	// A record the store rejects (it exists) inside a transaction: the
	// ones before it in the transaction are committed, none after.
	lines = []string{
		`{"PartitionKey":"a","RowKey":"0"}`,
		`{"PartitionKey":"a","RowKey":"05"}`,
		`{"PartitionKey":"a","RowKey":"1"}`, // exists: line 3
		`{"PartitionKey":"a","RowKey":"6"}`,
	}
	st = runImport(t, h, "People", "jsonl", "insert", "stop", strings.Join(lines, "\n"), 1<<20)
	require.True(t, st.Stopped)
	require.Equal(t, int64(2), st.Imported)
	require.Equal(t, []importIssue{{Line: 3, Code: edm.CodeEntityAlreadyExists,
		Message: st.Issues[0].Message}}, st.Issues)
	require.Equal(t, 4, count(t, tb))

	// With skip, bad records are reported and the rest goes in.
	lines = []string{
		`{"PartitionKey":"b","RowKey":"1"}`,
		`not json`,
		`{"PartitionKey":"b","RowKey":"1"}`, // a repeat of line 1: exists by then
		`{"PartitionKey":"b","RowKey":"2","Too/Bad":1}`,
		`{"PartitionKey":"b","RowKey":"3"}`,
	}
	st = runImport(t, h, "People", "jsonl", "insert", "skip", strings.Join(lines, "\n")+"\n", 5)
	require.False(t, st.Stopped)
	require.Equal(t, int64(2), st.Imported)
	require.Equal(t, int64(3), st.Rejected)
	var issueLines []int
	for _, is := range st.Issues {
		issueLines = append(issueLines, is.Line)
	}
	require.ElementsMatch(t, []int{2, 3, 4}, issueLines)
	require.Equal(t, 6, count(t, tb))
}

func TestImportCSV(t *testing.T) {
	ctx := context.Background()
	h := newHarness(t, nil)
	tb := h.table("People")
	h.login()
	data := "PartitionKey,RowKey,Name,Age:Edm.Int32,When:Edm.DateTime,Raw:Edm.Binary\r\n" +
		"a,1,\"multi\nline, \"\"quoted\"\"\",36,2026-01-02T03:04:05.1234567Z,aGk=\r\n" +
		"a,2,\"\",,,\n" + // empty string; no Age, When, Raw
		"a,3,plain,x,,\n" + // line 5: Age is not an Int32
		"a,4,ab\"c,1,,\n" + // line 6: a stray quote
		"b,1,last,2,,"
	for _, chunk := range []int{3, len(data)} {
		require.NoError(t, h.db.DeleteTable(ctx, "People"))
		_, err := h.db.CreateTable(ctx, "People")
		require.NoError(t, err)
		st := runImport(t, h, "People", "csv", "insert", "skip", data, chunk)
		require.Equal(t, int64(3), st.Imported, "%+v", st)
		require.Equal(t, int64(2), st.Rejected)
		require.Equal(t, 5, st.Issues[0].Line)
		require.Equal(t, 6, st.Issues[1].Line)
		require.Contains(t, st.Issues[1].Message, "quote")
		e, err := tb.Get(ctx, "a", "1", nil)
		require.NoError(t, err)
		require.Equal(t, "multi\nline, \"quoted\"", e.Properties["Name"])
		require.Equal(t, int32(36), e.Properties["Age"])
		require.Equal(t, []byte("hi"), e.Properties["Raw"])
		e, err = tb.Get(ctx, "a", "2", nil)
		require.NoError(t, err)
		require.Equal(t, map[string]any{"Name": ""}, e.Properties)
	}
	// A bad header stops the import at once.
	st := runImport(t, h, "People", "csv", "insert", "skip", "PartitionKey,Name:Edm.Float\na,b\n", 100)
	require.True(t, st.Stopped)
	require.Contains(t, st.Error, "line 1")
	st = runImport(t, h, "People", "csv", "insert", "skip", "Name\nx\n", 100)
	require.True(t, st.Stopped)
	require.Contains(t, st.Error, "PartitionKey and RowKey")
}

func TestImportProtocol(t *testing.T) {
	h := newHarness(t, nil)
	h.table("People")
	h.login()
	start := func(v url.Values) (int, string) {
		return h.postRaw("/tables/People/import", "application/x-www-form-urlencoded", v.Encode())
	}
	ok := url.Values{"format": {"jsonl"}, "mode": {"insert"}, "onerror": {"stop"}}
	for k, bad := range map[string]string{"format": "xml", "mode": "merge", "onerror": "ignore"} {
		v := url.Values{}
		for kk, vv := range ok {
			v[kk] = vv
		}
		v.Set(k, bad)
		status, body := start(v)
		require.Equal(t, http.StatusBadRequest, status)
		require.Contains(t, body, bad)
	}
	status, _ := h.postRaw("/tables/Nobody/import", "application/x-www-form-urlencoded", ok.Encode())
	require.Equal(t, http.StatusNotFound, status)

	status, body := start(ok)
	require.Equal(t, http.StatusCreated, status)
	var started struct{ ID string }
	require.NoError(t, json.Unmarshal([]byte(body), &started))
	chunk := func(offset int, last, data string) (int, importStatus) {
		status, body := h.postRaw(fmt.Sprintf("/tables/People/import/%s?offset=%d&last=%s", started.ID, offset, last),
			"application/octet-stream", data)
		var st importStatus
		_ = json.Unmarshal([]byte(body), &st)
		return status, st
	}
	status, st := chunk(0, "0", `{"PartitionKey":"a","RowKey":"1"}`+"\n"+`{"Parti`)
	require.Equal(t, http.StatusOK, status)
	require.Equal(t, int64(1), st.Imported, "a complete record is committed before the answer")
	// A chunk sent twice (its answer lost) is refused with where to resume.
	status, st = chunk(0, "0", `{"PartitionKey":"a","RowKey":"1"}`+"\n")
	require.Equal(t, http.StatusConflict, status)
	require.Equal(t, int64(41), st.Received)
	status, st = chunk(41, "1", `tionKey":"a","RowKey":"2"}`)
	require.Equal(t, http.StatusOK, status)
	require.True(t, st.Done)
	require.Equal(t, int64(2), st.Imported)
	status, _ = chunk(67, "1", "more")
	require.Equal(t, http.StatusConflict, status, "a finished import takes nothing")

	// Unknown imports, other tables' imports, other sessions' imports.
	status, _ = h.postRaw("/tables/People/import/nope?offset=0", "application/octet-stream", "x")
	require.Equal(t, http.StatusNotFound, status)
	h.table("Other")
	status, _ = h.postRaw("/tables/Other/import/"+started.ID+"?offset=0", "application/octet-stream", "x")
	require.Equal(t, http.StatusNotFound, status)
	other := h.fork()
	other.login()
	status, _ = other.postRaw("/tables/People/import/"+started.ID+"?offset=0", "application/octet-stream", "x")
	require.Equal(t, http.StatusNotFound, status)

	// A session runs at most a few imports at once.
	for range maxImportsPerSession {
		status, _ = start(ok)
		require.Equal(t, http.StatusCreated, status)
	}
	status, _ = start(ok)
	require.Equal(t, http.StatusTooManyRequests, status)

	// The CSRF token is required, as for every change.
	status, _, _ = h.do("POST", "/tables/People/import", strings.NewReader(ok.Encode()),
		http.Header{"Content-Type": {"application/x-www-form-urlencoded"}})
	require.Equal(t, http.StatusForbidden, status)
}

func TestExport(t *testing.T) {
	ctx := context.Background()
	h := newHarness(t, nil)
	tb := h.table("People")
	fillPeople(t, tb, 2100) // three pages of 1000
	require.NoError(t, tb.Insert(ctx, typedEntity()))
	h.login()

	resp, err := h.client.Get(h.srv.URL + "/tables/People/export?format=jsonl&filter=" + url.QueryEscape("PartitionKey ne 'x'"))
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, `attachment; filename="People.jsonl"`, resp.Header.Get("Content-Disposition"))
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	n := 0
	for sc.Scan() {
		var e tablestore.Entity
		require.NoError(t, e.UnmarshalJSON(sc.Bytes()))
		require.NotContains(t, sc.Text(), "odata.etag")
		if e.RowKey == "r'1" {
			want := typedEntity()
			require.Equal(t, len(want.Properties), len(e.Properties))
		}
		n++
	}
	resp.Body.Close()
	require.Equal(t, 2101, n)

	// CSV: the header holds every name and type; it imports back.
	resp, err = h.client.Get(h.srv.URL + "/tables/People/export?format=csv&filter=" + url.QueryEscape("PartitionKey eq 'a'"))
	require.NoError(t, err)
	csv, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	header, _, _ := strings.Cut(string(csv), "\n")
	require.Equal(t, "PartitionKey,RowKey,Age:Edm.Int32,Age:Edm.Int64,Name:Edm.String", header)
	require.Equal(t, 1051, strings.Count(string(csv), "\n"))
	h.table("Copy")
	st := runImport(t, h, "Copy", "csv", "insert", "stop", string(csv), 64<<10)
	require.Equal(t, int64(1050), st.Imported, "%+v", st)
	a, err := tb.Get(ctx, "a", "010", nil)
	require.NoError(t, err)
	b, err := h.db.Table("Copy").Get(ctx, "a", "010", nil)
	require.NoError(t, err)
	require.Equal(t, a.Properties, b.Properties)

	// The typed entity survives a CSV round trip too.
	resp, err = h.client.Get(h.srv.URL + "/tables/People/export?format=csv&filter=" + url.QueryEscape("RowKey eq 'r''1'"))
	require.NoError(t, err)
	csv, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	h.table("Copy2")
	st = runImport(t, h, "Copy2", "csv", "insert", "stop", string(csv), 10)
	require.Equal(t, int64(1), st.Imported, "%+v\n%s", st, csv)
	got, err := h.db.Table("Copy2").Get(ctx, "p 1", "r'1", nil)
	require.NoError(t, err)
	require.Equal(t, typedEntity().Properties, got.Properties)

	// The CSV download is spreadsheet-safe: a cell that would run as a
	// formula is written after a quote; numbers stay as they are.
	require.NoError(t, tb.Insert(ctx, &tablestore.Entity{PartitionKey: "=HYPERLINK(\"x.example\")", RowKey: "@r",
		Properties: map[string]any{"Name": "+cmd|' /C calc'!A0", "Age": int32(-3)}}))
	resp, err = h.client.Get(h.srv.URL + "/tables/People/export?format=csv&filter=" + url.QueryEscape("RowKey eq '@r'"))
	require.NoError(t, err)
	csv, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	_, row, _ := strings.Cut(string(csv), "\n")
	require.Equal(t, `"'=HYPERLINK(""x.example"")",'@r,-3,'+cmd|' /C calc'!A0`+"\n", row)

	// Errors before the first byte are pages with the status.
	for path, want := range map[string]int{
		"/tables/People/export?format=xml":                     http.StatusBadRequest,
		"/tables/People/export?format=csv&filter=Age+gt":       http.StatusBadRequest,
		"/tables/Nobody/export?format=jsonl":                   http.StatusNotFound,
		"/tables/People/export?format=jsonl&select=Bad%20Name": http.StatusBadRequest,
	} {
		status, _, _ := h.get(path)
		require.Equal(t, want, status, path)
	}
}

func TestAbortResponse(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(strings.Repeat("x", 10000)))
		abortResponse(w)
	}))
	defer srv.Close()
	resp, err := http.Get(srv.URL)
	require.NoError(t, err)
	defer resp.Body.Close()
	_, err = io.ReadAll(resp.Body)
	require.Error(t, err, "a download cut short must not look complete")
}
