package server

import (
	"bytes"
	"fmt"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestAdversarialBodies: 4 MiB bodies shaped to make parsing expensive
// are refused with a 4xx, and allocate no more than the memory the
// handler reserves for a body of their size (itself and four times it).
func TestAdversarialBodies(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates on its own")
	}
	hd, _ := newTestHandler(t, nil)
	const size = DefaultMaxBodyBytes
	fill := func(prefix, unit, suffix string) string {
		n := (size - len(prefix) - len(suffix)) / len(unit)
		return prefix + strings.Repeat(unit, n) + suffix
	}
	var tinyParts strings.Builder
	tinyParts.WriteString("--" + batchBoundary + "\r\nContent-Type: multipart/mixed; boundary=c\r\n\r\n")
	for tinyParts.Len() < size-100 {
		tinyParts.WriteString("--c\r\n\r\n")
	}
	tinyParts.WriteString("--c--\r\n--" + batchBoundary + "--\r\n")
	manyHeaders := fill("--"+batchBoundary+"\r\nContent-Type: multipart/mixed; boundary=c\r\n\r\n--c\r\nContent-Type: application/http\r\n\r\nPOST http://h/devstoreaccount1/things HTTP/1.1\r\n",
		"X-H: v\r\n", "\r\n{}\r\n--c--\r\n--"+batchBoundary+"--\r\n")
	members := 0
	var wide strings.Builder
	wide.WriteString(`{"PartitionKey":"p","RowKey":"r"`)
	for wide.Len() < size-20 {
		fmt.Fprintf(&wide, `,"p%d":1`, members)
		members++
	}
	wide.WriteString("}")
	for _, tc := range []struct {
		name, method, target, ctype, body string
	}{
		{"batch of tiny parts", "POST", "/devstoreaccount1/$batch", "multipart/mixed; boundary=" + batchBoundary, tinyParts.String()},
		{"part with many headers", "POST", "/devstoreaccount1/$batch", "multipart/mixed; boundary=" + batchBoundary, manyHeaders},
		{"entity of tiny members", "POST", "/devstoreaccount1/things", "application/json", wide.String()},
		{"deeply nested table body", "POST", "/devstoreaccount1/Tables", "application/json", fill(`{"TableName":"abc","x":`, "[", "")},
		{"table body of tiny members", "POST", "/devstoreaccount1/Tables", "application/json", fill(`{"TableName":"abc"`, `,"a":1`, "}")},
		{"ACL of many identifiers", "PUT", "/devstoreaccount1/things?comp=acl", "application/xml", fill("<SignedIdentifiers>", "<SignedIdentifier><Id>a</Id></SignedIdentifier>", "</SignedIdentifiers>")},
		{"deep XML", "PUT", "/devstoreaccount1/?restype=service&comp=properties", "application/xml", fill("", "<a>", "")},
	} {
		body := []byte(tc.body)
		if len(body) > size {
			t.Fatalf("%s: %d bytes", tc.name, len(body))
		}
		r := httptest.NewRequest(tc.method, tc.target, bytes.NewReader(body))
		r.Header.Set("Content-Type", tc.ctype)
		signLite(r, DevAccount, DevKey, time.Now())
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		w := serve(hd, r)
		runtime.ReadMemStats(&after)
		alloc := after.TotalAlloc - before.TotalAlloc
		t.Logf("%s: %d, %.1f MB allocated for %.1f MB", tc.name, w.Code, float64(alloc)/1e6, float64(len(body))/1e6)
		if w.Code < 400 || w.Code >= 500 {
			t.Errorf("%s: %d %.300s", tc.name, w.Code, w.Body)
		}
		if limit := uint64(len(body)) * (1 + bodyWorkFactor); alloc > limit {
			t.Errorf("%s: %d bytes allocated for a %d-byte body; the handler reserves %d", tc.name, alloc, len(body), limit)
		}
	}
}
