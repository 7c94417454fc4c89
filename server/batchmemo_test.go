package server

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

// changeset is a $batch body (boundary batchBoundary) holding one
// changeset of inserts posted to urls, in order.
func changeset(urls []string) []byte {
	var b strings.Builder
	b.WriteString("--" + batchBoundary + "\r\nContent-Type: multipart/mixed; boundary=cs\r\n\r\n")
	for i, u := range urls {
		b.WriteString("--cs\r\nContent-Type: application/http\r\n\r\nPOST " + u + " HTTP/1.1\r\nContent-Type: application/json\r\n\r\n")
		b.WriteString(`{"PartitionKey":"p","RowKey":"r` + itoa(i) + `"}` + "\r\n")
	}
	b.WriteString("--cs--\r\n--" + batchBoundary + "--\r\n")
	return []byte(b.String())
}

// TestBatchURLMemo: a changeset's sub-requests name the resources their
// URLs name on their own, whether a URL repeats the one before, one
// further back, or differs; an error in a later URL is that URL's.
func TestBatchURLMemo(t *testing.T) {
	hd, db := fuzzHandler(t)
	defer db.Close()
	h := hd.(*handler)
	const (
		simple  = "http://127.0.0.1:10002/devstoreaccount1/things"
		escaped = "http://127.0.0.1:10002/devstoreaccount1/th%69ngs"
		other   = "/devstoreaccount1/others"
		query   = "http://127.0.0.1:10002/devstoreaccount1/things?x=1"
		entity  = "http://127.0.0.1:10002/devstoreaccount1/things(PartitionKey='p',RowKey='a')"
		host    = "http://devstoreaccount1.table.core.windows.net/things"
	)
	urls := []string{simple, simple, escaped, escaped, simple, other, other, query, query, entity, entity, host, host, simple}
	sc := new(batchScratch)
	subs, err := h.parseBatch("multipart/mixed; boundary="+batchBoundary, changeset(urls), sc)
	if err != nil {
		t.Fatal(err)
	}
	if len(subs) != len(urls) {
		t.Fatalf("%d sub-requests, want %d", len(subs), len(urls))
	}
	for i, u := range urls {
		want, err := h.subRequestResource(u, "")
		if err != nil {
			t.Fatalf("%s: %v", u, err)
		}
		if !reflect.DeepEqual(subs[i].res, want) {
			t.Errorf("sub-request %d (%s): resource %+v, want %+v", i, u, subs[i].res, want)
		}
	}
	if subs[0].res.table != "things" || subs[5].res.table != "others" || subs[9].res.kind != kindEntity || subs[9].res.rk != "a" {
		t.Errorf("resources %+v, %+v, %+v", subs[0].res, subs[5].res, subs[9].res)
	}

	// A bad URL after a good one repeated is refused as on its own.
	bad := "http://127.0.0.1:10002/devstoreaccount1/Tables"
	_, want := h.subRequestResource(bad, "")
	if want == nil {
		t.Fatal("the bad URL is accepted on its own")
	}
	_, err = h.parseBatch("multipart/mixed; boundary="+batchBoundary, changeset([]string{simple, simple, bad}), new(batchScratch))
	if !errors.Is(err, want) && (err == nil || err.Error() != want.Error()) {
		t.Errorf("error %v, want %v", err, want)
	}
}

// TestBatchURLMemoAllocs: a changeset of 100 inserts posted to one URL
// that needs url.Parse reads that URL once, not once per sub-request.
func TestBatchURLMemoAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("allocations differ under the race detector")
	}
	hd, db := fuzzHandler(t)
	defer db.Close()
	h := hd.(*handler)
	urls := make([]string, 100)
	for i := range urls {
		urls[i] = "http://127.0.0.1:10002/devstoreaccount1/th%69ngs"
	}
	body := changeset(urls)
	ct := "multipart/mixed; boundary=" + batchBoundary
	sc := new(batchScratch)
	allocs := testing.AllocsPerRun(20, func() {
		subs, err := h.parseBatch(ct, body, sc)
		if err != nil || len(subs) != 100 {
			t.Fatalf("%d sub-requests: %v", len(subs), err)
		}
		sc.clear(true)
	})
	if allocs > 20 {
		t.Errorf("%.0f allocations for 100 sub-requests to one URL; want the URL read once (at most 20)", allocs)
	}
}
