package server

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/cockroachdb/datadriven"
	"github.com/tablestore/tablestore"
)

// TestCosmosExchanges replays testdata/cosmos: HTTP exchanges with the
// Cosmos flavor. "new [option...]" starts a fresh store and handler:
// storage-limits, case-insensitive, cors, storage-wire,
// storage-continuation, charge, order=insertion|seeded|sorted, seed=N,
// ru=N (per second), per-table. "request" is as in TestExchanges, signed
// for the Cosmos account; the output shows every response header but
// Date and Content-Length. "advance D" moves the handler's clock.
func TestCosmosExchanges(t *testing.T) {
	var h http.Handler
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	datadriven.RunTest(t, "testdata/cosmos", func(t *testing.T, d *datadriven.TestData) string {
		switch d.Cmd {
		case "new":
			c := &Cosmos{}
			for _, a := range d.CmdArgs {
				switch a.Key {
				case "storage-limits":
					c.StorageLimits = true
				case "case-insensitive":
					c.CaseInsensitiveTables = true
				case "cors":
					c.CORS = true
				case "storage-wire":
					c.StorageWire = true
				case "storage-continuation":
					c.StorageContinuation = true
				case "charge":
					c.ChargeHeader = true
				case "per-table":
					c.ThroughputPerTable = true
				case "order":
					c.Order = map[string]Order{"insertion": OrderInsertion, "seeded": OrderSeeded, "sorted": OrderSorted}[a.Vals[0]]
				case "seed":
					c.Seed, _ = strconv.ParseUint(a.Vals[0], 10, 64)
				case "ru":
					c.RequestUnitsPerSecond, _ = strconv.ParseFloat(a.Vals[0], 64)
				default:
					t.Fatalf("unknown option %s", a.Key)
				}
			}
			db, err := tablestore.OpenInMemory(&tablestore.Options{NoSync: true})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { db.Close() })
			h, err = New(db, &Options{Account: CosmosDevAccount, Keys: []string{CosmosDevKey}, Cosmos: c,
				Now: func() time.Time { return now }})
			if err != nil {
				t.Fatal(err)
			}
			return ""
		case "advance":
			dur, err := time.ParseDuration(d.CmdArgs[0].Key)
			if err != nil {
				t.Fatal(err)
			}
			now = now.Add(dur)
			return ""
		case "request":
			r := parseTestRequest(t, d.Input, d.HasArg("crlf"))
			r.Host = "localhost:8902"
			signLite(r, CosmosDevAccount, CosmosDevKey, time.Now())
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			return formatCosmosResponse(w.Result())
		default:
			t.Fatalf("unknown command %s", d.Cmd)
			return ""
		}
	})
}

// formatCosmosResponse prints the status, every header but Date and
// Content-Length, and the body, masked as formatResponse masks them.
func formatCosmosResponse(resp *http.Response) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d %s\n", resp.StatusCode, http.StatusText(resp.StatusCode))
	var names []string
	for k := range resp.Header {
		if k != "Date" && k != "Content-Length" {
			names = append(names, k)
		}
	}
	slices.Sort(names)
	for _, k := range names {
		fmt.Fprintf(&b, "%s: %s\n", k, mask(resp.Header[k][0]))
	}
	writeExchangeBody(&b, resp.Body, "\\r\\n", "⏎")
	return b.String()
}

// cosmosHandler is a Cosmos-flavored handler over a fresh store, on the
// clock *now.
func cosmosHandler(t *testing.T, c *Cosmos, now *time.Time) http.Handler {
	t.Helper()
	db, err := tablestore.OpenInMemory(&tablestore.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	opts := &Options{Account: CosmosDevAccount, Keys: []string{CosmosDevKey}, Cosmos: c, Now: func() time.Time { return *now }}
	if c == nil {
		opts = &Options{Account: CosmosDevAccount, Keys: []string{CosmosDevKey}, Now: opts.Now}
	}
	h, err := New(db, opts)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// cosmosDo sends one request, host-style, to h.
func cosmosDo(h http.Handler, method, target, body string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(method, "http://localhost:8902"+target, strings.NewReader(body))
	r.RequestURI = target
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Accept", "application/json;odata=nometadata")
	r.Header.Set("Prefer", "return-no-content")
	signLite(r, CosmosDevAccount, CosmosDevKey, time.Now())
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

// TestCosmosDifferences: code that relies on Storage's key order, on a
// RowKey over 255 bytes or on case-insensitive table names works on the
// Storage flavor and fails on the Cosmos one, each difference alone.
func TestCosmosDifferences(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	sortedQuery := func(h http.Handler) bool {
		for _, rk := range []string{"2", "10", "1"} {
			cosmosDo(h, "POST", "/Things", `{"PartitionKey":"p","RowKey":"`+rk+`"}`)
		}
		w := cosmosDo(h, "GET", "/Things()?$select=RowKey", "")
		return strings.Index(w.Body.String(), `"RowKey":"1"`) < strings.Index(w.Body.String(), `"RowKey":"10"`) &&
			strings.Index(w.Body.String(), `"RowKey":"10"`) < strings.Index(w.Body.String(), `"RowKey":"2"`)
	}
	longRowKey := func(h http.Handler) bool {
		return cosmosDo(h, "POST", "/Things", `{"PartitionKey":"p","RowKey":"`+strings.Repeat("r", 300)+`"}`).Code == http.StatusNoContent
	}
	caseInsensitive := func(h http.Handler) bool {
		return cosmosDo(h, "POST", "/THINGS", `{"PartitionKey":"p","RowKey":"x"}`).Code == http.StatusNoContent
	}
	for _, tc := range []struct {
		name string
		uses func(http.Handler) bool
		off  Cosmos // the Cosmos flavor with this difference switched off
	}{
		{"sorted results", sortedQuery, Cosmos{Order: OrderSorted}},
		{"300-byte RowKey", longRowKey, Cosmos{StorageLimits: true}},
		{"case-insensitive table name", caseInsensitive, Cosmos{CaseInsensitiveTables: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, flavor := range []struct {
				name string
				c    *Cosmos
				want bool
			}{{"storage", nil, true}, {"cosmos", &Cosmos{}, false}, {"cosmos, switched off", &tc.off, true}} {
				h := cosmosHandler(t, flavor.c, &now)
				if w := cosmosDo(h, "POST", "/Tables", `{"TableName":"Things"}`); w.Code != http.StatusNoContent {
					t.Fatalf("create table: %d %s", w.Code, w.Body)
				}
				if got := tc.uses(h); got != flavor.want {
					t.Errorf("%s: works %v, want %v", flavor.name, got, flavor.want)
				}
			}
		})
	}
}

// TestCosmosThrottle: a client writing 1 KB entities as fast as it can
// against 100 RU/s gets 100 RU/s within 10 % over a minute of the
// handler's clock, and every 429 carries x-ms-retry-after-ms. Each
// answer takes a millisecond; a throttled client waits what it is told.
func TestCosmosThrottle(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	h := cosmosHandler(t, &Cosmos{RequestUnitsPerSecond: 100, ChargeHeader: true}, &now)
	cosmosDo(h, "POST", "/Tables", `{"TableName":"Load"}`)
	start := now.Add(time.Second) // past the bucket's first second
	var charged float64
	throttled := 0
	value := strings.Repeat("v", 950)
	for i := 0; now.Before(start.Add(time.Minute)); i++ {
		if i > 1_000_000 {
			t.Fatal("the loop does not end")
		}
		w := cosmosDo(h, "POST", "/Load", fmt.Sprintf(`{"PartitionKey":"p","RowKey":"%08d","v":"%s"}`, i, value))
		switch w.Code {
		case http.StatusNoContent:
			ru, err := strconv.ParseFloat(w.Header().Get("x-ms-request-charge"), 64)
			if err != nil || ru <= 0 {
				t.Fatalf("charge %q", w.Header().Get("x-ms-request-charge"))
			}
			if !now.Before(start) {
				charged += ru
			}
			now = now.Add(time.Millisecond)
		case http.StatusTooManyRequests:
			throttled++
			ms, err := strconv.Atoi(w.Header().Get("x-ms-retry-after-ms"))
			if err != nil || ms <= 0 {
				t.Fatalf("429 without x-ms-retry-after-ms: %q", w.Header().Get("x-ms-retry-after-ms"))
			}
			now = now.Add(time.Duration(ms) * time.Millisecond)
		default:
			t.Fatalf("write: %d %s", w.Code, w.Body)
		}
	}
	rate := charged / 60
	t.Logf("%.1f RU/s, %d throttled", rate, throttled)
	if rate < 90 || rate > 110 || throttled == 0 {
		t.Errorf("%.1f RU/s with %d throttled answers, want 100 ± 10 %% and some", rate, throttled)
	}
}

// FuzzCosmosTokens: the continuation token readers refuse what is not
// a token with InvalidInput, never panic, and read back every token the
// writers make.
func FuzzCosmosTokens(f *testing.F) {
	f.Add("", uint64(0), "p", "r", 0)
	f.Add(`{"token":"e30=","range":{}}`, uint64(7), "", "\x00", 3)
	f.Add("-RID:~e30=#RT:1#TRC:2", uint64(1<<63), "ü", "'", 1000)
	f.Fuzz(func(t *testing.T, s string, rank uint64, pk, rk string, n int) {
		if p, err := parseEntityToken(s); err != nil && err != errCosmosToken || err == nil && s != "" && p == nil {
			t.Fatalf("entity token %q: %v %v", s, p, err)
		}
		if p, _, err := parseTableToken(s); err != nil && err != errCosmosToken || err == nil && s != "" && p == nil {
			t.Fatalf("table token %q: %v %v", s, p, err)
		}
		if n < 0 {
			n = -(n + 1)
		}
		want := cosmosPos{Rank: rank, Keys: [2]string{pk, rk}, N: n}
		got, err := parseEntityToken(entityToken(want))
		if utf8.ValidString(pk) && utf8.ValidString(rk) && (err != nil || *got != want) {
			t.Fatalf("entity token round trip: %+v, got %+v %v", want, got, err)
		}
		got, page, err := parseTableToken(tableToken(n, want))
		if utf8.ValidString(pk) && utf8.ValidString(rk) && (err != nil || *got != want || page != n) {
			t.Fatalf("table token round trip: %+v, got %+v %d %v", want, got, page, err)
		}
	})
}

// FuzzReorderEntity: reordering an entity keeps every member with its
// value, puts odata members first and Timestamp last, and leaves what is
// not a JSON object as it was.
func FuzzReorderEntity(f *testing.F) {
	f.Add([]byte(`{"odata.etag":"x","b":1,"Timestamp":"t","a":2,"a@odata.type":"Edm.Int64"}`), "a,b")
	f.Add([]byte(`[1]`), "")
	f.Add([]byte(`{"PartitionKey":"p","RowKey":"r","z":{"n":[1,2]}}`), "z,RowKey,PartitionKey")
	f.Fuzz(func(t *testing.T, obj []byte, order string) {
		out := reorderEntity(obj, strings.Split(order, ","))
		before, ok := objectMembers(obj)
		if !ok {
			if string(out) != string(obj) {
				t.Fatalf("not an object, yet rewritten: %q -> %q", obj, out)
			}
			return
		}
		after, ok := objectMembers(out)
		if !ok || len(after) != len(before) {
			t.Fatalf("%q -> %q: members lost", obj, out)
		}
		count := map[string]int{}
		for _, m := range before {
			count[m.name+"\x00"+string(m.raw)]++
		}
		for _, m := range after {
			count[m.name+"\x00"+string(m.raw)]--
		}
		for k, n := range count {
			if n != 0 {
				t.Fatalf("%q -> %q: member %q changed", obj, out, k)
			}
		}
		for i, m := range after {
			if strings.HasPrefix(m.name, "odata.") && i > 0 && !strings.HasPrefix(after[i-1].name, "odata.") {
				t.Fatalf("%q -> %q: an odata member after a property", obj, out)
			}
			if m.name == "Timestamp" && i < len(after)-1 && !strings.HasPrefix(after[len(after)-1].name, "Timestamp") {
				t.Fatalf("%q -> %q: Timestamp not last", obj, out)
			}
		}
	})
}

// TestCosmosBatchParts: a batch's answer under each flavor. Cosmos DB
// numbers its parts with Content-ID (a part's own when the request gives
// one, in its MIME headers or its sub-request's), gives each entity its
// own Timestamp, increasing, and answers each part with the headers
// recorded for its kind, and a failed part with its own error shape;
// Storage none of these. StorageWire and StorageTimestamps switch each
// off alone.
func TestCosmosBatchParts(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	const part = "--cs\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n"
	body := "--b\r\nContent-Type: multipart/mixed; boundary=cs\r\n\r\n" +
		part + "\r\nPOST http://localhost:8902/Things HTTP/1.1\r\nContent-Type: application/json\r\n\r\n{\"PartitionKey\":\"p\",\"RowKey\":\"1\"}\r\n" +
		part + "Content-ID: a1\r\n\r\nPOST http://localhost:8902/Things HTTP/1.1\r\nContent-Type: application/json\r\n\r\n{\"PartitionKey\":\"p\",\"RowKey\":\"2\"}\r\n" +
		part + "\r\nDELETE http://localhost:8902/Things(PartitionKey='p',RowKey='old') HTTP/1.1\r\nIf-Match: *\r\nContent-ID: d\r\n\r\n" +
		part + "\r\nPATCH http://localhost:8902/Things(PartitionKey='p',RowKey='3') HTTP/1.1\r\nContent-ID: b2\r\n\r\n{\"N\":1}\r\n" +
		part + "\r\nPUT http://localhost:8902/Things(PartitionKey='p',RowKey='old2') HTTP/1.1\r\nIf-Match: *\r\n\r\n{\"N\":2}\r\n" +
		"--cs--\r\n--b--\r\n"
	// The header names of the parts: two inserts, a delete, an upsert
	// and an update.
	storageHeads := []string{
		"X-Content-Type-Options Cache-Control Preference-Applied DataServiceVersion Location DataServiceId ETag",
		"X-Content-Type-Options Cache-Control Preference-Applied DataServiceVersion Location DataServiceId ETag",
		"X-Content-Type-Options Cache-Control DataServiceVersion",
		"X-Content-Type-Options Cache-Control DataServiceVersion ETag",
		"X-Content-Type-Options Cache-Control DataServiceVersion ETag",
	}
	cosmosHeads := []string{
		"ETag Preference-Applied Location Content-ID",
		"ETag Preference-Applied Location Content-ID",
		"Content-ID",
		"ETag Content-Type Content-ID",
		"ETag Content-ID",
	}
	// A failed insert's part; <time> is when the request started, by the
	// wall clock.
	const storageFailed = "HTTP/1.1 409 Conflict\r\nX-Content-Type-Options: nosniff\r\nCache-Control: no-cache\r\nPreference-Applied: return-no-content\r\n" +
		"DataServiceVersion: 3.0;\r\nContent-Type: application/json;odata=minimalmetadata;streaming=true;charset=utf-8\r\n\r\n" +
		`{"odata.error":{"code":"EntityAlreadyExists","message":{"lang":"en-US","value":"0:The specified entity already exists.\nRequestId:<id>\nTime:<time>"}}}` + "\r\n"
	const cosmosFailed = "HTTP/1.1 409 Conflict\r\nContent-Type: application/json;odata=fullmetadata\r\n\r\n" +
		`{"odata.error":{"code":"EntityAlreadyExists","message":{"lang":"en-us","value":"0:The specified entity already exists.\n\nRequestID:<id>\n"}}}` + "\r\n"
	for _, tc := range []struct {
		name       string
		c          *Cosmos
		contentIDs []string // "" where none
		distinct   bool     // each entity its own Timestamp
		heads      []string // each part's header names
		failed     string   // a failed insert's part, its request ID <id>, its Time <time>
	}{
		{"storage", nil, []string{"", "", "", "", ""}, false, storageHeads, storageFailed},
		{"cosmos", &Cosmos{}, []string{"1", "a1", "d", "b2", "5"}, true, cosmosHeads, cosmosFailed},
		{"cosmos, storage wire", &Cosmos{StorageWire: true}, []string{"", "", "", "", ""}, true, storageHeads, storageFailed},
		{"cosmos, storage timestamps", &Cosmos{StorageTimestamps: true}, []string{"1", "a1", "d", "b2", "5"}, false, cosmosHeads, cosmosFailed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := cosmosHandler(t, tc.c, &now)
			cosmosDo(h, "POST", "/Tables", `{"TableName":"Things"}`)
			for _, rk := range []string{"old", "old2"} {
				if w := cosmosDo(h, "POST", "/Things", `{"PartitionKey":"p","RowKey":"`+rk+`"}`); w.Code != http.StatusNoContent {
					t.Fatalf("insert: %d %s", w.Code, w.Body)
				}
			}
			send := func(body string) *httptest.ResponseRecorder {
				r := httptest.NewRequest("POST", "http://localhost:8902/$batch", strings.NewReader(body))
				r.RequestURI = "/$batch"
				r.Header.Set("Content-Type", "multipart/mixed; boundary=b")
				signLite(r, CosmosDevAccount, CosmosDevKey, time.Now())
				w := httptest.NewRecorder()
				h.ServeHTTP(w, r)
				return w
			}
			w := send(body)
			if w.Code != http.StatusAccepted || strings.Contains(w.Body.String(), "odata.error") {
				t.Fatalf("batch: %d %s", w.Code, w.Body)
			}
			var ids, etags, heads []string
			for _, p := range strings.Split(w.Body.String(), "HTTP/1.1 ")[1:] {
				head, _, _ := strings.Cut(p, "\r\n\r\n")
				id, etag := "", ""
				var names []string
				for _, line := range strings.Split(head, "\r\n")[1:] {
					k, v, _ := strings.Cut(line, ": ")
					names = append(names, k)
					switch k {
					case "Content-ID":
						id = v
					case "ETag":
						etag = v
					}
				}
				ids = append(ids, id)
				heads = append(heads, strings.Join(names, " "))
				if etag != "" {
					etags = append(etags, etag)
				}
			}
			if !slices.Equal(ids, tc.contentIDs) {
				t.Errorf("Content-IDs %q, want %q", ids, tc.contentIDs)
			}
			if !slices.Equal(heads, tc.heads) {
				t.Errorf("part headers %q, want %q", heads, tc.heads)
			}
			if len(etags) != 4 {
				t.Fatalf("ETags %q, want the four writes'", etags)
			}
			increasing := slices.IsSorted(etags) && len(slices.Compact(slices.Clone(etags))) == 4
			same := len(slices.Compact(slices.Clone(etags))) == 1
			if tc.distinct && !increasing || !tc.distinct && !same {
				t.Errorf("ETags %q, want distinct and increasing: %v", etags, tc.distinct)
			}
			// A Content-ID the answer could not echo as one header line is
			// refused where the answer echoes them.
			echoes := tc.contentIDs[0] != ""
			w = send(strings.Replace(body, "Content-ID: a1", "Content-ID: a1\rInjected: x", 1))
			if refused := w.Code == http.StatusBadRequest && strings.Contains(w.Body.String(), "InvalidInput"); refused != echoes {
				t.Errorf("a Content-ID with a CR: %d %s", w.Code, w.Body)
			}
			// The entities are stored with the versions the parts gave.
			for i, rk := range []string{"1", "2", "3", "old2"} {
				g := cosmosDo(h, "GET", "/Things(PartitionKey='p',RowKey='"+rk+"')", "")
				//lint:ignore SA1008 the server sets the header as Azure spells it, not canonicalized
				if got := strings.Join(g.Header()["ETag"], ","); got != etags[i] {
					t.Errorf("row %s: stored ETag %q, the part's %q", rk, got, etags[i])
				}
			}
			// A failed insert's part, in each flavor's shape.
			w = send("--b\r\nContent-Type: multipart/mixed; boundary=cs\r\n\r\n" + part +
				"\r\nPOST http://localhost:8902/Things HTTP/1.1\r\nContent-Type: application/json\r\n\r\n{\"PartitionKey\":\"p\",\"RowKey\":\"1\"}\r\n--cs--\r\n--b--\r\n")
			_, failed, _ := strings.Cut(w.Body.String(), "binary\r\n\r\n")
			failed, _, _ = strings.Cut(failed, "--changesetresponse_")
			_, at, _ := strings.Cut(failed, "Time:")
			at, _, _ = strings.Cut(at, `"`)
			want := strings.NewReplacer("<id>", w.Header().Get("x-ms-request-id"), "<time>", at).Replace(tc.failed)
			if w.Code != http.StatusAccepted || failed != want {
				t.Errorf("failed part: %d %q, want %q", w.Code, failed, want)
			}
		})
	}
}
