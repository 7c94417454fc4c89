package server

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tablestore/tablestore"
	"github.com/tablestore/tablestore/edm"
)

// postBatch sends a $batch body through h and returns the status and the
// response body.
func postBatch(t testing.TB, h http.Handler, body []byte, chunked bool) (int, string) {
	t.Helper()
	var rd io.Reader = bytes.NewReader(body)
	if chunked {
		rd = io.MultiReader(rd) // hides the length
	}
	r := httptest.NewRequest("POST", "/devstoreaccount1/$batch", rd)
	if chunked {
		r.ContentLength = -1
	}
	r.Header.Set("Content-Type", "multipart/mixed; boundary="+batchBoundary)
	signLite(r, DevAccount, DevKey, time.Now())
	w := serve(h, r)
	return w.Code, w.Body.String()
}

// TestBatchBodyLimit: the 4 MiB limit is on the request body's bytes,
// counted exactly. A body of exactly 4 MiB (100 inserts whose strings
// Azure's size formula would count at 8 MiB) commits; one byte more is
// RequestBodyTooLarge whether its length is declared or not.
func TestBatchBodyLimit(t *testing.T) {
	hd, db := newTestHandler(t, nil)
	ctx := context.Background()
	// The review's case: a 3.03 MB batch.
	if status, out := postBatch(t, hd, buildBatch(t, "small", 100, 3_030_000), false); status != http.StatusAccepted || strings.Contains(out, "odata.error") {
		t.Fatalf("3.03 MB batch: %d %.400s", status, out)
	}
	exact := buildBatch(t, "exact", 100, DefaultMaxBodyBytes)
	for _, chunked := range []bool{false, true} {
		over := buildBatch(t, fmt.Sprint("over", chunked), 100, DefaultMaxBodyBytes+1)
		status, out := postBatch(t, hd, over, chunked)
		if status != http.StatusRequestEntityTooLarge || !strings.Contains(out, `"code":"RequestBodyTooLarge"`) {
			t.Errorf("4 MiB + 1 (chunked %v): %d %.300s", chunked, status, out)
		}
		if _, err := db.Table("things").Get(ctx, fmt.Sprint("over", chunked), "000", nil); tablestore.ErrorCode(err) != edm.CodeResourceNotFound {
			t.Errorf("an oversized batch was stored: %v", err)
		}
	}
	if status, out := postBatch(t, hd, exact, true); status != http.StatusAccepted || strings.Contains(out, "odata.error") ||
		strings.Count(out, "HTTP/1.1 204") != 100 {
		t.Fatalf("exactly 4 MiB: %d %.400s", status, out)
	}
	n := 0
	for e, err := range db.Table("things").Query(ctx, tablestore.Query{Filter: "PartitionKey eq 'exact'"}) {
		if err != nil {
			t.Fatal(err)
		}
		if len(e.Properties["A"].(string))+len(e.Properties["B"].(string)) < 40000 {
			t.Fatalf("entity %s holds %d bytes", e.RowKey, len(e.Properties["A"].(string)))
		}
		n++
	}
	if n != 100 {
		t.Fatalf("%d of 100 entities stored", n)
	}
}

// batchOf builds a $batch body of the given JSON entities, inserted in
// order into table things.
func batchOf(entities ...string) []byte {
	var b strings.Builder
	b.WriteString("--" + batchBoundary + "\r\nContent-Type: multipart/mixed; boundary=cs\r\n\r\n")
	for _, e := range entities {
		b.WriteString("--cs\r\nContent-Type: application/http\r\n\r\nPOST http://127.0.0.1/devstoreaccount1/things HTTP/1.1\r\nContent-Type: application/json\r\n\r\n")
		b.WriteString(e + "\r\n")
	}
	b.WriteString("--cs--\r\n--" + batchBoundary + "--\r\n")
	return []byte(b.String())
}

// TestBatchOperationLimit: 100 operations commit; 101 fail as Azure
// answers, InvalidInput in the changeset, with nothing written.
func TestBatchOperationLimit(t *testing.T) {
	hd, db := newTestHandler(t, nil)
	for _, n := range []int{100, 101} {
		var ents []string
		for i := 0; i < n; i++ {
			ents = append(ents, entityJSONBody(fmt.Sprint("ops", n), fmt.Sprintf("%03d", i)))
		}
		status, out := postBatch(t, hd, batchOf(ents...), false)
		ok := status == http.StatusAccepted && !strings.Contains(out, "odata.error")
		if n == 100 && !ok {
			t.Fatalf("100 operations: %d %.300s", status, out)
		}
		if n == 101 && (ok || !strings.Contains(out, `"code":"InvalidInput"`) || !strings.Contains(out, `"value":"99:The batch request operation exceeds the maximum 100 changes per change set.`)) {
			t.Fatalf("101 operations: %d %.600s", status, out)
		}
	}
	if _, err := db.Table("things").Get(context.Background(), "ops101", "000", nil); tablestore.ErrorCode(err) != edm.CodeResourceNotFound {
		t.Fatalf("a 101-operation batch was applied: %v", err)
	}
}

// TestEntityLimitsInBatch: Azure's per-entity limits apply to each
// operation of a batch at their exact boundaries, the failing index
// named, and to a single insert alike.
func TestEntityLimitsInBatch(t *testing.T) {
	hd, db := newTestHandler(t, nil)
	props := func(n int, value func(i int) string) string {
		var b strings.Builder
		for i := 0; i < n; i++ {
			fmt.Fprintf(&b, `,"P%03d":%s`, i, value(i))
		}
		return b.String()
	}
	str := func(n int) string { return `"` + strings.Repeat("x", n) + `"` }
	// An entity of exactly 1 MiB by Azure's formula: 4 + 2×(1+3) for the
	// keys, and 16 String properties named P000..P015, each 8 + 2×4 +
	// 4 + 2×chars: 1,048,576 = 12 + 320 + 2×524,122 characters. One more
	// is over.
	mib := func(extra int) string {
		return props(16, func(i int) string {
			n := 524122 / 16
			if i < 524122%16+extra {
				n++
			}
			return str(n)
		})
	}
	key := func(n int) string { return strings.Repeat("k", n) }
	for _, tc := range []struct {
		name      string
		ok, over  string // the second operation of the batch, at and over the limit
		overCode  string
		overInURL bool
	}{
		{"entity size", `{"PartitionKey":"e","RowKey":"big"` + mib(0) + `}`, `{"PartitionKey":"e","RowKey":"big"` + mib(1) + `}`, "EntityTooLarge", false},
		{"string value", `{"PartitionKey":"s","RowKey":"v","S":` + str(32768) + `}`, `{"PartitionKey":"s","RowKey":"v","S":` + str(32769) + `}`, "PropertyValueTooLarge", false},
		{"property count", `{"PartitionKey":"c","RowKey":"n"` + props(252, func(int) string { return "1" }) + `}`,
			`{"PartitionKey":"c","RowKey":"n"` + props(253, func(int) string { return "1" }) + `}`, "TooManyProperties", false},
		{"key length", `{"PartitionKey":"k","RowKey":"` + key(1024) + `"}`, `{"PartitionKey":"k","RowKey":"` + key(1025) + `"}`, "KeyValueTooLarge", false},
		{"name length", `{"PartitionKey":"m","RowKey":"n","` + strings.Repeat("N", 255) + `":1}`, `{"PartitionKey":"m","RowKey":"n","` + strings.Repeat("N", 256) + `":1}`, "PropertyNameTooLong", false},
	} {
		pk := tc.ok[len(`{"PartitionKey":"`) : len(`{"PartitionKey":"`)+1]
		first := entityJSONBody(pk, "first")
		status, out := postBatch(t, hd, batchOf(first, tc.over), false)
		if status != http.StatusAccepted || !strings.Contains(out, `"code":"`+tc.overCode+`"`) || !strings.Contains(out, `"value":"1:`) {
			t.Errorf("%s over the limit: %d %.300s", tc.name, status, out)
		}
		if _, err := db.Table("things").Get(context.Background(), pk, "first", nil); tablestore.ErrorCode(err) != edm.CodeResourceNotFound {
			t.Errorf("%s: half a batch was applied: %v", tc.name, err)
		}
		r := signedRequest("POST", "/devstoreaccount1/things", tc.over)
		r.Header.Set("Content-Type", "application/json")
		if w := serve(hd, r); w.Code != http.StatusBadRequest || w.Header().Get("x-ms-error-code") != tc.overCode {
			t.Errorf("%s over the limit, single insert: %d %.300s", tc.name, w.Code, w.Body)
		}
		status, out = postBatch(t, hd, batchOf(first, tc.ok), false)
		if status != http.StatusAccepted || strings.Contains(out, "odata.error") {
			t.Errorf("%s at the limit: %d %.300s", tc.name, status, out)
		}
	}
}

// TestHeaderLimit: request lines and headers over MaxHeaderBytes are
// answered 431 with Azure's JSON error body, by the handler below the
// wire limit and by NewListener's connections above it; a request that
// is not HTTP gets Azure's body too.
func TestHeaderLimit(t *testing.T) {
	s := newNetServer(t, nil, nil)
	c := &http.Client{Timeout: 10 * time.Second}
	for _, tc := range []struct {
		name   string
		header int // bytes of one extra header's value
		query  int // bytes of an extra query parameter
	}{
		{"headers over the handler's limit", 80 << 10, 0},
		{"headers over the wire limit", 200 << 10, 0},
		{"URL over the handler's limit", 0, 70 << 10},
		{"URL over the wire limit", 0, 300 << 10},
	} {
		path := "/Tables"
		if tc.query > 0 {
			path += "?pad=" + strings.Repeat("q", tc.query)
		}
		hdr := map[string]string{}
		if tc.header > 0 {
			hdr["x-ms-pad"] = strings.Repeat("h", tc.header)
		}
		status, code, body := s.do(t, c, sharedKeyCred(true), "GET", path, nil, hdr)
		if status != http.StatusRequestHeaderFieldsTooLarge || code != "RequestHeaderFieldsTooLarge" ||
			!strings.HasPrefix(body, `{"odata.error":{"code":"RequestHeaderFieldsTooLarge"`) {
			t.Errorf("%s: %d %s %.200s", tc.name, status, code, body)
		}
	}
	// Just under the handler's limit is served.
	if status, _, body := s.do(t, c, sharedKeyCred(true), "GET", "/Tables", nil, map[string]string{"x-ms-pad": strings.Repeat("h", 60<<10)}); status != http.StatusOK {
		t.Errorf("60 KiB of headers: %d %.200s", status, body)
	}
	// Not HTTP at all.
	conn, err := net.Dial("tcp", strings.TrimPrefix(strings.TrimSuffix(s.url, "/"+DevAccount), "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := conn.Write([]byte("this is not http\r\n\r\n")); err != nil {
		t.Fatal(err)
	}
	out, _ := io.ReadAll(conn)
	if !bytes.HasPrefix(out, []byte("HTTP/1.1 400 Bad Request\r\n")) || !bytes.Contains(out, []byte(`{"odata.error":{"code":"InvalidInput"`)) ||
		!bytes.Contains(out, []byte("\r\nx-ms-error-code: InvalidInput\r\n")) {
		t.Errorf("not HTTP: %q", out)
	}
}

// TestCheckMembersBound checks the length below which checkMembers skips
// its scan: the shortest object of maxMembers+1 members is still
// scanned and refused, and one member fewer passes.
func TestCheckMembersBound(t *testing.T) {
	minimal := func(n int) []byte { // n members of the fewest bytes
		return []byte("{" + strings.Repeat(`"":0,`, n-1) + `"":0}`)
	}
	for _, n := range []int{1, 2, maxMembers, maxMembers + 1} {
		require.Len(t, minimal(n), minObjectBytes(n))
	}
	for _, tc := range []struct {
		name string
		body []byte
		code tablestore.Code // "" for no error
	}{
		{"maxMembers, shortest", minimal(maxMembers), ""},
		{"one more, shortest", minimal(maxMembers + 1), edm.CodeTooManyProperties},
		{"one more, spaced", bytes.ReplaceAll(minimal(maxMembers+1), []byte(","), []byte(", ")), edm.CodeTooManyProperties},
		{"many real properties", []byte(`{"PartitionKey":"p","RowKey":"r"` + strings.Repeat(`,"p":1`, 600) + `}`), edm.CodeTooManyProperties},
		{"a typical entity", []byte(`{"PartitionKey":"p","RowKey":"r","Name":"n","Count":3}`), ""},
	} {
		err := checkMembers(tc.body)
		if tc.code == "" {
			require.NoError(t, err, tc.name)
			continue
		}
		var te *tablestore.Error
		require.ErrorAs(t, err, &te, tc.name)
		require.Equal(t, tc.code, te.Code, tc.name)
	}
}
