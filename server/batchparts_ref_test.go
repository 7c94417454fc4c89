package server

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/tablestore/tablestore"
	"github.com/tablestore/tablestore/internal/wire"
)

// appendBatchPartsByPieces is the parts of a successful changeset's
// response as they were written before the parts' constant heads were
// formatted once per batch: each part's lines appended piece by piece.
// FuzzBatchParts holds appendBatchParts equal to it.
func appendBatchPartsByPieces(b []byte, lead, base string, actions []tablestore.TransactionAction, subs []subRequest) []byte {
	for i := range actions {
		b = append(b, lead...)
		a, s := &actions[i], &subs[i]
		pk, rk, etag := actionKeys(a.Entity)
		b = append(b, "HTTP/1.1 204 No Content\r\nX-Content-Type-Options: nosniff\r\nCache-Control: no-cache\r\n"...)
		if a.Type == tablestore.ActionInsert {
			b = append(b, "Preference-Applied: return-no-content\r\nDataServiceVersion: 3.0;\r\nLocation: "...)
			loc := len(b)
			b = append(b, base...)
			b = wire.AppendEntityPath(b, s.res.table, pk, rk)
			b = append(b, "\r\nDataServiceId: "...)
			b = append(b, b[loc:len(b)-len("\r\nDataServiceId: ")]...)
			b = append(b, "\r\n"...)
		} else {
			b = append(b, "DataServiceVersion: 1.0;\r\n"...)
		}
		if a.Type != tablestore.ActionDelete {
			b = append(b, "ETag: "...)
			b = append(b, etag...)
			b = append(b, "\r\n"...)
		}
		b = append(b, "\r\n"...)
		b = append(b, "\r\n"...)
	}
	return b
}

// FuzzBatchParts: the parts appendBatchParts writes for any mix of
// actions (kinds, raw or map entities), keys, table, base and ETags are
// those written piece by piece, after any bytes already in the buffer;
// those appendCosmosParts writes read back as the Cosmos parts of the
// actions (checkCosmosParts).
func FuzzBatchParts(f *testing.F) {
	f.Add("/devstoreaccount1/", "things", "p1", "r'1 /?#%", `W/"datetime'2024-01-02T03%3A04%3A05.0000000Z'"`, uint64(0x0123456789), uint8(5))
	f.Add("/", "t", "", "", "", uint64(0xffffffffffffffff), uint8(1))
	f.Add("/a b/é/", "Tab1e", "\u00e9\x00\x7f", "r", "*", uint64(0x5555), uint8(30))
	kinds := []tablestore.ActionType{tablestore.ActionInsert, tablestore.ActionDelete, tablestore.ActionUpdateMerge,
		tablestore.ActionUpdateReplace, tablestore.ActionUpsertMerge, tablestore.ActionUpsertReplace}
	f.Fuzz(func(t *testing.T, base, table, pk, rk, etag string, mix uint64, n uint8) {
		const lead = "--changesetresponse_x\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\n"
		n %= 40
		actions := make([]tablestore.TransactionAction, n)
		subs := make([]subRequest, n)
		for i := range actions {
			k := mix >> (i % 32 * 2) // two bits a kind, a third for the entity's type
			a := &actions[i]
			a.Type = kinds[(int(k&3)+i)%len(kinds)]
			pki, rki := pk+itoa(i%3), rk+itoa(i)
			if k&4 != 0 || a.Type == tablestore.ActionDelete {
				a.Entity = &tablestore.Entity{PartitionKey: pki, RowKey: rki, ETag: tablestore.ETag(etag + itoa(i))}
			} else {
				a.Entity = &tablestore.RawEntity{PartitionKey: pki, RowKey: rki, ETag: tablestore.ETag(etag + itoa(i))}
			}
			subs[i].res.table = table
		}
		for i := range subs {
			if mix>>(63-i%32)&1 != 0 {
				subs[i].contentID = rk + itoa(i) // the request's own
			}
		}
		prefix := []byte("already written\r\n")
		heads := batchPartHeads(nil, lead, base)
		got := appendBatchParts(bytes.Clone(prefix), heads, len(lead)+len(insertPartHead)+len(base), len(base), actions, subs)
		want := appendBatchPartsByPieces(bytes.Clone(prefix), lead, base, actions, subs)
		if !bytes.Equal(got, want) {
			t.Fatalf("parts:\n%q\npiece by piece:\n%q", got, want)
		}
		if oneLine(base + table + etag + rk) { // as the server's are; Content-IDs are checked (checkContentIDs)
			checkCosmosParts(t, lead, base, actions, subs)
		}
	})
}

// oneLine reports whether s holds no control character.
func oneLine(s string) bool {
	return !strings.ContainsFunc(s, func(r rune) bool { return r < ' ' || r == 0x7f })
}

// checkCosmosParts fails t unless the parts appendCosmosParts writes for
// actions, split by the batch parser, are one per action, each a 204
// whose headers are, in order, those recorded for its kind, with the
// action's ETag, the entity's Location and the part's Content-ID.
func checkCosmosParts(t *testing.T, lead, base string, actions []tablestore.TransactionAction, subs []subRequest) {
	t.Helper()
	body := appendCosmosParts([]byte("preamble\r\n"), lead, base, actions, subs)
	body = append(body, "--changesetresponse_x--\r\n"...)
	parts, err := splitMultipart(body, "changesetresponse_x", tablestore.MaxTransactionActions, nil)
	if err != nil || len(parts) != len(actions) {
		t.Fatalf("%d parts for %d actions (%v):\n%q", len(parts), len(actions), err, body)
	}
	for i, p := range parts {
		a := &actions[i]
		pk, rk, etag := actionKeys(a.Entity)
		status, rest, _ := bytes.Cut(p.body, []byte("\r\n"))
		id := strings.TrimSpace(subs[i].contentID)
		if id == "" {
			id = itoa(i + 1)
		}
		var want []string
		if a.Type != tablestore.ActionDelete {
			want = append(want, "ETag: "+strings.TrimSpace(string(etag)))
		}
		switch a.Type {
		case tablestore.ActionInsert:
			want = append(want, "Preference-Applied: return-no-content", "Location: "+strings.TrimSpace(base+wire.EntityPath(subs[i].res.table, pk, rk)))
		case tablestore.ActionUpsertMerge, tablestore.ActionUpsertReplace:
			want = append(want, "Content-Type: application/json")
		}
		want = append(want, "Content-ID: "+id)
		var got []string
		newPart(rest).header.each(func(k, v []byte) bool {
			got = append(got, string(k)+": "+string(v))
			return true
		})
		if string(status) != "HTTP/1.1 204 No Content" || !slices.Equal(got, want) {
			t.Fatalf("part %d (%v): %q %q, want %q", i, a.Type, status, got, want)
		}
	}
}

// BenchmarkBatchParts writes the response parts of 100 inserts with the
// heads formatted once per batch ("heads") and piece by piece ("pieces").
//
// Reproduce: go test ./server -run XXX -bench BatchParts -benchmem
func BenchmarkBatchParts(b *testing.B) {
	const lead = "--changesetresponse_0b1c2d3e-0000-4000-8000-000000000000\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\n"
	const base = "http://127.0.0.1:10002/devstoreaccount1/"
	actions := make([]tablestore.TransactionAction, 100)
	subs := make([]subRequest, 100)
	for i := range actions {
		actions[i] = tablestore.TransactionAction{Type: tablestore.ActionInsert, Entity: &tablestore.RawEntity{
			PartitionKey: "p00000", RowKey: "r" + itoa(100000+i), ETag: `W/"datetime'2026-11-29T04%3A30%3A00.1234567Z'"`}}
		subs[i].res.table = "things"
	}
	var buf, heads []byte
	b.Run("heads", func(b *testing.B) {
		for b.Loop() {
			heads = batchPartHeads(heads[:0], lead, base)
			buf = appendBatchParts(buf[:0], heads, len(lead)+len(insertPartHead)+len(base), len(base), actions, subs)
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*100), "ns/entity")
	})
	b.Run("pieces", func(b *testing.B) {
		for b.Loop() {
			buf = appendBatchPartsByPieces(buf[:0], lead, base, actions, subs)
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*100), "ns/entity")
	})
}
