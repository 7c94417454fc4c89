package server

// These tests cover invalid UTF-8 in JSON bodies at the server level:
// raw bytes and lone-surrogate \u escapes, in keys and values, for each
// write (insert, update, merge, upsert, batch operations, create table).
// Each must be refused with 400 InvalidInput and leave nothing written.
// The server has no check of its own: the one JSON decoder
// (internal/wire, behind the root package) refuses such text.

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/tablestore/tablestore"
	"github.com/tablestore/tablestore/edm"
)

// badJSONTexts are JSON entity bodies for PartitionKey "u", RowKey "r",
// each with invalid text in one place.
var badJSONTexts = []struct{ name, body string }{
	{"raw byte in a value", "{\"PartitionKey\":\"u\",\"RowKey\":\"r\",\"S\":\"a\xffb\"}"},
	{"raw byte in a key", "{\"PartitionKey\":\"u\",\"RowKey\":\"r\",\"S\xfe\":\"v\"}"},
	{"truncated sequence in a value", "{\"PartitionKey\":\"u\",\"RowKey\":\"r\",\"S\":\"\xe6\x97\"}"},
	{"encoded surrogate in a value", "{\"PartitionKey\":\"u\",\"RowKey\":\"r\",\"S\":\"\xed\xa0\x80\"}"},
	{"raw byte in the RowKey", "{\"PartitionKey\":\"u\",\"RowKey\":\"r\xff\",\"S\":\"v\"}"},
	{"lone high surrogate in a value", `{"PartitionKey":"u","RowKey":"r","S":"\ud800"}`},
	{"lone low surrogate in a value", `{"PartitionKey":"u","RowKey":"r","S":"x\udc00y"}`},
	{"lone surrogate in a key", `{"PartitionKey":"u","RowKey":"r","S\ud83d":"v"}`},
	{"reversed pair in a value", `{"PartitionKey":"u","RowKey":"r","S":"\ude00\ud83d"}`},
	{"lone surrogate in the PartitionKey", `{"PartitionKey":"u\udbff","RowKey":"r","S":"v"}`},
}

func skipUntilStrictJSON(t *testing.T) {
	t.Helper()
}

// TestInvalidUTF8Refused: every write refuses every bad body with 400
// InvalidInput and stores nothing.
func TestInvalidUTF8Refused(t *testing.T) {
	skipUntilStrictJSON(t)
	hd, db := newTestHandler(t, nil)
	ctx := context.Background()
	tbl := db.Table("things")
	for _, tc := range badJSONTexts {
		for _, w := range []struct {
			method, target string
			header         map[string]string
		}{
			{"POST", "/devstoreaccount1/things", nil},
			{"PUT", "/devstoreaccount1/things(PartitionKey='u',RowKey='r')", nil},
			{"MERGE", "/devstoreaccount1/things(PartitionKey='u',RowKey='r')", nil},
			{"PATCH", "/devstoreaccount1/things(PartitionKey='u',RowKey='r')", nil},
			{"PUT", "/devstoreaccount1/things(PartitionKey='u',RowKey='r')", map[string]string{"If-Match": "*"}},
		} {
			r := signedRequest(w.method, w.target, tc.body)
			r.Header.Set("Content-Type", "application/json")
			for k, v := range w.header {
				r.Header.Set(k, v)
			}
			rec := serve(hd, r)
			if rec.Code != http.StatusBadRequest || rec.Header().Get("x-ms-error-code") != "InvalidInput" {
				t.Errorf("%s, %s %s: %d %s", tc.name, w.method, w.target, rec.Code, rec.Body)
			}
		}
		// In a batch, beside a valid operation: the batch fails at the
		// bad one and writes nothing.
		status, out := postBatch(t, hd, batchOf(entityJSONBody("u", "ok"), tc.body), false)
		if status != http.StatusAccepted || !strings.Contains(out, `"code":"InvalidInput"`) || !strings.Contains(out, `"value":"1:`) {
			t.Errorf("%s, in a batch: %d %.300s", tc.name, status, out)
		}
		for e, err := range tbl.Query(ctx, tablestore.Query{}) {
			if err != nil {
				t.Fatal(err)
			}
			t.Fatalf("%s: stored %s/%q %v", tc.name, e.PartitionKey, e.RowKey, e.Properties)
		}
	}
	// Create Table with a bad name body.
	for _, body := range []string{"{\"TableName\":\"ab\xffc\"}", `{"TableName":"ab\udc00c"}`} {
		r := signedRequest("POST", "/devstoreaccount1/Tables", body)
		r.Header.Set("Content-Type", "application/json")
		if rec := serve(hd, r); rec.Code != http.StatusBadRequest {
			t.Errorf("create table %q: %d %s", body, rec.Code, rec.Body)
		}
	}
}

// TestInvalidUTF8NoMerging: two keys that differ only in their invalid
// bytes are not both turned into U+FFFD: neither is stored, so a second
// insert cannot answer EntityAlreadyExists for a key the client never
// wrote.
func TestInvalidUTF8NoMerging(t *testing.T) {
	skipUntilStrictJSON(t)
	hd, db := newTestHandler(t, nil)
	for _, body := range []string{
		"{\"PartitionKey\":\"u\",\"RowKey\":\"k\xfe\"}",
		"{\"PartitionKey\":\"u\",\"RowKey\":\"k\xff\"}",
		`{"PartitionKey":"u","RowKey":"k\ud800"}`,
	} {
		r := signedRequest("POST", "/devstoreaccount1/things", body)
		r.Header.Set("Content-Type", "application/json")
		if rec := serve(hd, r); rec.Code != http.StatusBadRequest || rec.Header().Get("x-ms-error-code") != "InvalidInput" {
			t.Errorf("%q: %d %s", body, rec.Code, rec.Body)
		}
	}
	if _, err := db.Table("things").Get(context.Background(), "u", "k\uFFFD", nil); tablestore.ErrorCode(err) != edm.CodeResourceNotFound {
		t.Fatalf("a repaired key was stored: %v", err)
	}
}
