package server

import (
	"bufio"
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/tablestore/tablestore"
	"github.com/tablestore/tablestore/internal/wire"
)

// entityBodies reads the shared corpus of entity bodies,
// ../testdata/entity_bodies.txt (one a line, # for comments), and adds
// bodies too long for a line of it.
func entityBodies(t testing.TB) []string {
	f, err := os.Open("../testdata/entity_bodies.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if l := sc.Text(); l != "" && !strings.HasPrefix(l, "#") {
			out = append(out, l)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(out) < 40 {
		t.Fatalf("the corpus holds %d bodies", len(out))
	}
	long := strings.Repeat("x", 40000)
	props := make([]string, 256)
	for i := range props {
		props[i] = `"P` + itoa(i) + `":` + itoa(i)
	}
	return append(out,
		`{"PartitionKey":"p","RowKey":"r8","S":"`+long+`"}`,
		`{"PartitionKey":"p","RowKey":"a/b","S":"`+long+`"}`,
		`{"PartitionKey":"p","RowKey":"big","A":"`+long+`","B":"`+long+`","C":"`+long+`"}`,
		`{"PartitionKey":"p","RowKey":"many",`+strings.Join(props, ",")+`}`)
}

// pathsStore is a store with table fzz holding one entity, on a clock
// that stands still: two such stores given the same writes hold the same
// bytes and give the same ETags.
func pathsStore(t testing.TB) (http.Handler, *tablestore.DB) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	return oneEntityHandler(t, func() time.Time { return at })
}

// unstable matches what differs between two answers to one request: the
// request's id and time in an error's message, the batch's boundaries.
var unstable = regexp.MustCompile(`RequestId:[0-9a-f-]+\\nTime:[0-9T:.Z-]+|(batch|changeset)response_[0-9a-f-]+`)

// answer is what FuzzBodyPaths compares of a response.
func answer(w *httptest.ResponseRecorder) string {
	var b strings.Builder
	b.WriteString(itoa(w.Code) + "\n")
	for _, k := range []string{"ETag", "Location", "Preference-Applied", "Content-Type", "DataServiceId"} {
		b.WriteString(k + ": " + strings.Join(w.Header().Values(k), ",") + "\n")
	}
	b.Write(w.Body.Bytes())
	return unstable.ReplaceAllString(b.String(), "…")
}

var pathsLevels = [...]string{"nometadata", "minimalmetadata", "fullmetadata"}

// bodyRequest is the request mode makes of body: an insert answered with
// or without content at each metadata level, a PUT or a MERGE of the
// entity (p, keep), with or without If-Match, or a $batch holding body as
// an insert and as a merge.
func bodyRequest(body []byte, mode uint8) *http.Request {
	const entity = "/devstoreaccount1/fzz(PartitionKey='p',RowKey='keep')"
	level := pathsLevels[int(mode/8)%3]
	var r *http.Request
	switch mode % 8 {
	case 0, 1:
		r = httptest.NewRequest("POST", "/devstoreaccount1/fzz", bytes.NewReader(body))
		if mode%8 == 1 {
			r.Header.Set("Prefer", "return-no-content")
		}
	case 2:
		r = httptest.NewRequest("PUT", entity, bytes.NewReader(body))
	case 3:
		r = httptest.NewRequest("MERGE", entity, bytes.NewReader(body))
	case 4:
		r = httptest.NewRequest("PUT", entity, bytes.NewReader(body))
		r.Header.Set("If-Match", "*")
	case 5:
		r = httptest.NewRequest("MERGE", entity, bytes.NewReader(body))
		r.Header.Set("If-Match", "*")
	default:
		var b bytes.Buffer
		b.WriteString("--b\r\nContent-Type: multipart/mixed; boundary=c\r\n\r\n")
		b.WriteString("--c\r\nContent-Type: application/http\r\n\r\nPOST http://h/devstoreaccount1/fzz HTTP/1.1\r\nContent-Type: application/json\r\n\r\n")
		b.Write(body)
		b.WriteString("\r\n--c\r\nContent-Type: application/http\r\n\r\nMERGE http://h" + entity + " HTTP/1.1\r\n")
		if mode%8 == 7 {
			b.WriteString("If-Match: *\r\n")
		}
		b.WriteString("Content-Type: application/json\r\n\r\n")
		b.Write(body)
		b.WriteString("\r\n--c--\r\n--b--\r\n")
		r = httptest.NewRequest("POST", "/devstoreaccount1/$batch", &b)
		r.Header.Set("Content-Type", "multipart/mixed; boundary=b")
		return r
	}
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Accept", "application/json;odata="+level)
	return r
}

// FuzzBodyPaths sends each body, in each kind of write, to two stores:
// one whose handler decodes it straight into the stored form, one whose
// handler decodes it into a property map first (mapBodiesKey), the path
// bodies took before. The answers are the same (status, headers, body;
// an error's code, message and the operation it names), and so are the
// stores after, read as pages and as single entities at each metadata
// level; those reads are also the entities read as maps and written with
// AppendEntityJSON. Seeded from the shared corpus testdata/entity_bodies.txt.
//
// Reproduce: go test ./server -run XXX -fuzz FuzzBodyPaths
func FuzzBodyPaths(f *testing.F) {
	for i, b := range entityBodies(f) {
		f.Add([]byte(b), uint8(i))
	}
	rawH, rawDB := pathsStore(f)
	defer rawDB.Close()
	mapH, mapDB := pathsStore(f)
	defer mapDB.Close()
	f.Fuzz(func(t *testing.T, body []byte, mode uint8) {
		w1, w2 := httptest.NewRecorder(), httptest.NewRecorder()
		rawH.ServeHTTP(w1, bodyRequest(body, mode))
		r := bodyRequest(body, mode)
		mapH.ServeHTTP(w2, r.WithContext(context.WithValue(r.Context(), mapBodiesKey{}, true)))
		if got, want := answer(w1), answer(w2); got != want {
			t.Fatalf("mode %d, body %q:\nstraight to records:\n%s\nthrough maps:\n%s", mode, body, got, want)
		}
		if w1.Code >= 500 {
			t.Fatalf("status %d: %s", w1.Code, w1.Body)
		}
		if w1.Code >= 300 && w1.Code != http.StatusAccepted {
			return // refused: neither store changed (FuzzEntityBody, FuzzBatchBody)
		}
		if n := checkSameStores(t, rawH, mapH, mapDB); n > 50 {
			// The stores stay small, so each input's reads stay quick.
			for _, db := range []*tablestore.DB{rawDB, mapDB} {
				for e, err := range db.Table("fzz").Query(context.Background(), tablestore.Query{}) {
					if err != nil {
						t.Fatal(err)
					}
					if e.PartitionKey != "p" || e.RowKey != "keep" {
						if err := db.Table("fzz").Delete(context.Background(), e.PartitionKey, e.RowKey, "*"); err != nil {
							t.Fatal(err)
						}
					}
				}
			}
		}
	})
}

// checkSameStores reads table fzz from both handlers as pages and as
// single entities at each metadata level: the bytes are the same, and
// they are what the store's entities read as maps give through
// AppendEntityJSON. It returns how many entities the table holds.
func checkSameStores(t *testing.T, rawH, mapH http.Handler, db *tablestore.DB) int {
	t.Helper()
	var ents []*tablestore.Entity
	for e, err := range db.Table("fzz").Query(context.Background(), tablestore.Query{}) {
		if err != nil {
			t.Fatal(err)
		}
		ents = append(ents, e)
	}
	get := func(h http.Handler, target, level string) string {
		w := httptest.NewRecorder()
		r := httptest.NewRequest("GET", target, nil)
		r.Header.Set("Accept", "application/json;odata="+level)
		h.ServeHTTP(w, r)
		if w.Code != http.StatusOK {
			t.Fatalf("GET %s: %d %s", target, w.Code, w.Body)
		}
		return w.Body.String()
	}
	for _, level := range pathsLevels {
		var o tablestore.JSONOptions
		switch level {
		case "nometadata":
			o.Metadata = tablestore.NoMetadata
		case "minimalmetadata":
			o.Metadata = tablestore.MinimalMetadata
		case "fullmetadata":
			o = tablestore.JSONOptions{Metadata: tablestore.FullMetadata, Type: DevAccount + ".fzz",
				LinkBase: "http://example.com/devstoreaccount1/", LinkTable: "fzz"}
		}
		page := get(rawH, "/devstoreaccount1/fzz()", level)
		if other := get(mapH, "/devstoreaccount1/fzz()", level); page != other {
			t.Fatalf("%s pages differ:\n%s\n%s", level, page, other)
		}
		var want []byte
		var err error
		for i := range ents {
			if i > 0 {
				want = append(want, ',')
			}
			if want, err = tablestore.AppendEntityJSON(want, ents[i], &o); err != nil {
				t.Fatal(err)
			}
		}
		if _, value, _ := strings.Cut(page, `"value":[`); value != string(want)+"]}" {
			t.Fatalf("%s page:\n%s\nentities as maps:\n%s", level, page, want)
		}
		for _, e := range ents {
			target := "/devstoreaccount1/" + wire.EntityPath("fzz", e.PartitionKey, e.RowKey)
			one := get(rawH, target, level)
			if other := get(mapH, target, level); one != other {
				t.Fatalf("%s entities differ:\n%s\n%s", level, one, other)
			}
			m, err := tablestore.AppendEntityJSON(nil, e, &o)
			if err != nil {
				t.Fatal(err)
			}
			if o.Metadata != tablestore.NoMetadata {
				m = append([]byte(`{"odata.metadata":"http://example.com/devstoreaccount1/$metadata#fzz/@Element",`), m[1:]...)
			}
			if one != string(m) {
				t.Fatalf("%s entity:\n%s\nas a map:\n%s", level, one, m)
			}
		}
	}
	return len(ents)
}

// TestBatchNullBody: a $batch part whose body is the literal null is
// refused as a single write's is (InvalidInput, at its index), not
// taken for an entity with empty keys; nothing is written.
func TestBatchNullBody(t *testing.T) {
	h, db := pathsStore(t)
	defer db.Close()
	w := httptest.NewRecorder()
	h.ServeHTTP(w, bodyRequest([]byte("null"), 6))
	if w.Code != http.StatusAccepted || !strings.Contains(w.Body.String(), `"code":"InvalidInput","message":{"lang":"en-US","value":"0:the body must be a JSON object`) {
		t.Fatalf("%d %s", w.Code, w.Body)
	}
	n := 0
	for _, err := range db.Table("fzz").Query(context.Background(), tablestore.Query{}) {
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	if n != 1 {
		t.Fatalf("%d entities", n)
	}
	w = httptest.NewRecorder()
	h.ServeHTTP(w, bodyRequest([]byte("null"), 0))
	if w.Code != http.StatusBadRequest || !strings.Contains(w.Body.String(), "the body must be a JSON object") {
		t.Fatalf("single insert: %d %s", w.Code, w.Body)
	}
}
