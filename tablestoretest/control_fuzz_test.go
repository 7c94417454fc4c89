package tablestoretest

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// FuzzControlBodies sends arbitrary bodies to the control endpoints that
// decode JSON (a fault rule, a clock change, a snapshot name): every
// answer is a success or a 4xx, never a panic or a 5xx.
func FuzzControlBodies(f *testing.F) {
	for _, seed := range []string{
		`{"operation":"InsertEntity","status":503,"code":"ServerBusy","times":2,"retry_after":"20ms"}`,
		`{"operation":"QueryEntities","page":"empty"}`,
		`{"operation":"Nope"}`,
		`{"status":999}`,
		`{"probability":1.5,"seed":-1}`,
		`{"latency":"-1h"}`,
		`{"advance":"1h"}`,
		`{"set":"2030-01-02T03:04:05.123Z"}`,
		`{"advance":"x"}`,
		`{"set":"yesterday"}`,
		`{}`, `[]`, `null`, `{"unknown":1}`, `{"advance":1e400}`,
	} {
		f.Add("faults", seed)
		f.Add("clock", seed)
	}
	f.Add("snapshots/a%2Fb/restore", "")
	kit, err := NewKit(nil)
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { _ = kit.Close() })
	h := ControlHandler(kit)
	f.Fuzz(func(t *testing.T, path, body string) {
		r, err := http.NewRequest(http.MethodPost, "http://127.0.0.1/testkit/"+strings.TrimLeft(path, "/"), strings.NewReader(body))
		if err != nil {
			return // not a request a client could send
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code >= 500 {
			t.Fatalf("POST %s %q: %d %s", path, body, w.Code, w.Body)
		}
	})
}

// FuzzLoad: any input loads or fails with an error; none panics.
func FuzzLoad(f *testing.F) {
	for _, s := range []string{
		`{"PartitionKey":"p","RowKey":"1","n@odata.type":"Edm.Int64","n":"7"}` + "\n",
		`{"value":[{"PartitionKey":"p","RowKey":"1"}]}`,
		`[{"PartitionKey":"p","RowKey":"1"},{}]`,
		"PartitionKey,RowKey,A,A@type\np,1,2,Edm.Int32\n",
		"PartitionKey,RowKey,N:Edm.Double\np,1,NaN\n",
	} {
		f.Add(s)
	}
	d := NewDB(f)
	f.Fuzz(func(t *testing.T, in string) {
		_ = load(context.Background(), d.DB(), "fuzz", strings.NewReader(in))
	})
}
