package server

import (
	"bytes"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"unsafe"

	"github.com/tablestore/tablestore"
)

// parseSubRequestByParts is parseSubRequest as it was before it read
// the header block in one pass: the block found by newPart, then each
// header read through partHeader.each. FuzzSubRequest holds the two
// equal.
func (h *handler) parseSubRequestByParts(b []byte, memo *urlMemo) (subRequest, error) {
	var s subRequest
	l := lines{b: b}
	var reqLine []byte
	for {
		line, _, ok := l.next()
		if !ok {
			return s, errBadBatch("a changeset part holds no request")
		}
		if len(bytes.TrimSpace(line)) > 0 {
			reqLine = line
			break
		}
	}
	f, ok := requestLine(unsafe.String(unsafe.SliceData(reqLine), len(reqLine)))
	if !ok {
		return s, errBadBatch("a changeset part does not start with a request line")
	}
	p := newPart(b[l.off:])
	if p.bad {
		return s, errBadBatch("a sub-request has too many header lines")
	}
	s.method = upperMethod(f[0])
	s.body = bytes.TrimSpace(p.body)
	var xMethod []byte
	xMethods, haveIfMatch, haveIfNoneMatch := 0, false, false
	p.header.each(func(k, v []byte) bool {
		switch {
		case !haveIfMatch && strings.EqualFold(string(k), "If-Match"):
			s.ifMatch, haveIfMatch = tablestore.ETag(v), true
		case !haveIfNoneMatch && strings.EqualFold(string(k), "If-None-Match"):
			s.ifNoneMatch, haveIfNoneMatch = len(v) > 0, true
		case strings.EqualFold(string(k), "X-Http-Method"):
			if xMethods++; xMethods == 1 {
				xMethod = v
			}
		}
		return true
	})
	if xMethods > 0 {
		switch {
		case s.method != http.MethodPost:
			return s, errXMethodNotUsingPost
		case xMethods > 1:
			return s, errXMethodIncorrectCount
		}
		switch m := strings.ToUpper(string(xMethod)); m {
		case "MERGE", "PATCH", "PUT", "DELETE":
			s.method = m
		default:
			return s, errXMethodIncorrectValue
		}
	}
	if memo.url != "" && f[1] == memo.url {
		s.res = memo.res
		return s, nil
	}
	res, err := h.subRequestResource(f[1], memo.res.table)
	if err != nil {
		return s, err
	}
	s.res = res
	memo.url, memo.res = f[1], res
	return s, nil
}

// FuzzSubRequest: parseSubRequest reads any changeset part, and any
// part after it (sharing the URL memo), as reading its header block
// through newPart and partHeader does: the same method, resource,
// conditions, body and error. trimBlanks trims what TrimLeft does.
func FuzzSubRequest(f *testing.F) {
	body, _ := typicalBatch("p", 1)
	_, part, _ := bytes.Cut(body, []byte("binary\r\n\r\n"))
	f.Add(part, []byte("DELETE /devstoreaccount1/things(PartitionKey='p',RowKey='r') HTTP/1.1\r\nif-match: W/\"x\"\r\n\r\n"))
	f.Add([]byte("\n\nPOST /devstoreaccount1/t HTTP/1.1\n\nA: 1\nX-HTTP-Method: merge\n x-http-method : PUT\n\n{}\n"),
		[]byte("PUT /devstoreaccount1/t(PartitionKey='p',RowKey='r') HTTP/1.1\nIf-None-Match:\nIf-None-Match: *\nIf-Match: a\nIf-Match: b\nno colon\n\n{} "))
	f.Add([]byte("POST http://h/devstoreaccount1/t HTTP/1.1\r\nX-Http-Method: DELETE\r\nIf-\u212aatch: 1\r\n"), []byte("POST /x HTTP/1.1"))
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
			want, wantErr := h.parseSubRequestByParts(b, &refMemo)
			if fmt.Sprint(gotErr) != fmt.Sprint(wantErr) {
				t.Fatalf("%q: error %v, by parts %v", b, gotErr, wantErr)
			}
			if gotErr != nil {
				return
			}
			if got.method != want.method || !reflect.DeepEqual(got.res, want.res) || got.ifMatch != want.ifMatch ||
				got.ifNoneMatch != want.ifNoneMatch || !bytes.Equal(got.body, want.body) || (got.body == nil) != (want.body == nil) {
				t.Fatalf("%q: %+v, by parts %+v", b, got, want)
			}
		}
	})
}
