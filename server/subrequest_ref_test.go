package server

import (
	"bytes"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// subHeadersByParts is how parseSubRequest read a sub-request's header
// block before scanSubHeaders: the block found by newPart, then each
// header read through partHeader.each, the first If-Match,
// If-None-Match and Content-ID counting. FuzzSubRequest holds the two equal.
func subHeadersByParts(b []byte) subHeaders {
	p := newPart(b)
	if p.bad {
		return subHeaders{count: maxPartHeaders + 1}
	}
	hs := subHeaders{body: p.body}
	haveIfMatch, haveIfNoneMatch, haveContentID := false, false, false
	p.header.each(func(k, v []byte) bool {
		switch {
		case !haveContentID && strings.EqualFold(string(k), "Content-ID"):
			hs.contentID, haveContentID = v, true
		case !haveIfMatch && strings.EqualFold(string(k), "If-Match"):
			hs.ifMatch, haveIfMatch = v, true
		case !haveIfNoneMatch && strings.EqualFold(string(k), "If-None-Match"):
			hs.ifNoneMatch, haveIfNoneMatch = v, true
		case strings.EqualFold(string(k), "X-Http-Method"):
			if hs.xMethods++; hs.xMethods == 1 {
				hs.xMethod = v
			}
		}
		return true
	})
	return hs
}

// FuzzSubRequest: parseSubRequest reads any changeset part, and any
// part after it (sharing the URL memo), as reading its header block
// through newPart and partHeader does: the same method, resource,
// conditions, Content-ID, body and error. trimBlanks trims what
// TrimLeft does.
func FuzzSubRequest(f *testing.F) {
	body, _ := typicalBatch("p", 1)
	_, part, _ := bytes.Cut(body, []byte("binary\r\n\r\n"))
	f.Add(part, []byte("DELETE /devstoreaccount1/things(PartitionKey='p',RowKey='r') HTTP/1.1\r\nif-match: W/\"x\"\r\n\r\n"))
	f.Add([]byte("\n\nPOST /devstoreaccount1/t HTTP/1.1\n\nA: 1\nX-HTTP-Method: merge\n x-http-method : PUT\n\n{}\n"),
		[]byte("PUT /devstoreaccount1/t(PartitionKey='p',RowKey='r') HTTP/1.1\nIf-None-Match:\nIf-None-Match: *\nIf-Match: a\nIf-Match: b\nno colon\n\n{} "))
	f.Add([]byte("POST http://h/devstoreaccount1/t HTTP/1.1\r\nX-Http-Method: DELETE\r\nIf-\u212aatch: 1\r\n"), []byte("POST /x HTTP/1.1"))
	f.Add([]byte("POST /devstoreaccount1/t HTTP/1.1\r\nContent-ID: 7\r\ncontent-id:8\r\n\r\n{}"),
		[]byte("DELETE /devstoreaccount1/t(PartitionKey='p',RowKey='r') HTTP/1.1\r\nContent-ID:\r\nCONTENT-ID : x\r\nContent-\u0130D: k\r\n\r\n"))
	f.Add([]byte("POST /devstoreaccount1/t HTTP/1.1\r\nContent-ID: a\rInjected: b\r\n\r\n{}"), []byte("POST /devstoreaccount1/t HTTP/1.1\nContent-ID: \x7f\n\n{}"))
	f.Add([]byte("POST /devstoreaccount1/t HTTP/1.1\r\n"+strings.Repeat("A: b\r\n", maxPartHeaders)+"\r\n{}"),
		[]byte("POST /devstoreaccount1/t HTTP/1.1\r\n"+strings.Repeat("If-Match: b\r\n", maxPartHeaders+1)+"\r\n{}"))
	hd, db := fuzzHandler(f)
	defer db.Close()
	h := hd.(*handler)
	f.Fuzz(func(t *testing.T, first, second []byte) {
		var memo, refMemo urlMemo
		for _, b := range [][]byte{first, second} {
			if got, want := trimBlanks(string(b)), strings.TrimLeft(string(b), " \t"); got != want {
				t.Fatalf("trimBlanks(%q) = %q, TrimLeft %q", b, got, want)
			}
			got, gotErr := h.parseSubRequest(b, &memo)
			want, wantErr := h.parseSubRequestWith(b, &refMemo, subHeadersByParts)
			if fmt.Sprint(gotErr) != fmt.Sprint(wantErr) {
				t.Fatalf("%q: error %v, by parts %v", b, gotErr, wantErr)
			}
			if gotErr != nil {
				return
			}
			if got.method != want.method || !reflect.DeepEqual(got.res, want.res) || got.ifMatch != want.ifMatch ||
				got.ifNoneMatch != want.ifNoneMatch || got.contentID != want.contentID ||
				!bytes.Equal(got.body, want.body) || (got.body == nil) != (want.body == nil) {
				t.Fatalf("%q: %+v, by parts %+v", b, got, want)
			}
		}
	})
}
