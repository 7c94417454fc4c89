package server

import (
	"mime"
	"slices"
	"testing"

	"github.com/tablestore/tablestore"
)

// boundaryOfMIME is boundaryOf read through mime.ParseMediaType alone,
// as it was before the clients' form was read without it.
func boundaryOfMIME(contentType string) (string, bool) {
	mt, params, err := mime.ParseMediaType(contentType)
	if err != nil || mt != "multipart/mixed" || params["boundary"] == "" {
		return "", false
	}
	return params["boundary"], true
}

// FuzzBoundaryOf: boundaryOf finds the boundary mime.ParseMediaType
// finds, or none when it finds none, in any content type.
func FuzzBoundaryOf(f *testing.F) {
	for _, s := range []string{
		"multipart/mixed; boundary=batch_0b1c", "multipart/mixed; boundary=changeset_c0", "multipart/mixed; boundary=\"a b\"",
		"Multipart/Mixed; Boundary=x", "multipart/mixed;boundary=x", "multipart/mixed; boundary=x; boundary=y",
		"multipart/mixed; boundary=", "multipart/mixed; boundary=a ", "multipart/mixed; boundary=a;", "multipart/mixed; boundary=a=b",
		"multipart/mixed; boundary=a\u00e9", "multipart/mixed; boundary*=utf-8''x", "multipart/mixed; boundary=!#$%&'*+-.^_`|~",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, ct string) {
		got, gotOK := boundaryOf(ct)
		want, wantOK := boundaryOfMIME(ct)
		if got != want || gotOK != wantOK {
			t.Fatalf("%q: %q %v, mime %q %v", ct, got, gotOK, want, wantOK)
		}
	})
}

// TestBatchParseAllocs holds the server's own allocations in reading a
// $batch of 100 typical inserts, its envelope, sub-requests and their
// entities' actions, beside the allocations of decoding the entities
// alone (the library's): one, the table's name, per batch. (Before the
// boundaries were read without mime.ParseMediaType and the changeset's
// Content-Type without a copy, six.)
func TestBatchParseAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts differ under the race detector")
	}
	hd, db := fuzzHandler(t)
	defer db.Close()
	h := hd.(*handler)
	body, ents := typicalBatch("p00000", 100)
	ct := "multipart/mixed; boundary=" + batchBoundary
	sc := new(batchScratch)
	parse := testing.AllocsPerRun(20, func() {
		subs, err := h.parseBatch(ct, body, sc)
		if err != nil {
			t.Fatal(err)
		}
		sc.raws = slices.Grow(sc.raws[:0], len(subs))[:len(subs)] // as batch keeps them
		for i := range subs {
			if _, _, err := subs[i].action(&sc.raws[i], false); err != nil {
				t.Fatal(err)
			}
		}
		sc.clear(true)
	})
	raws := make([]tablestore.RawEntity, len(ents))
	decode := testing.AllocsPerRun(20, func() {
		for k, e := range ents {
			raws[k].Reset()
			if err := raws[k].UnmarshalJSON(body[e[0]:e[1]]); err != nil {
				t.Fatal(err)
			}
		}
	})
	if own := parse - decode; own > 1 {
		t.Fatalf("parsing the batch allocates %v times, its entities' decoding %v: %v of the server's own, want at most 1", parse, decode, own)
	}
}
