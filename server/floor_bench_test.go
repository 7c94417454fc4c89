package server

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"

	"github.com/tablestore/tablestore"
)

// discardWriter is a ResponseWriter that keeps the status and whether
// the body held an error, and drops the body: a benchmark's response
// costs what a connection's costs the handler, not a recorder's copy.
// An error's JSON (a failed batch's too) starts within the first
// errorWindow bytes of the body, so only they are searched: a search of a
// whole page or batch response would be the benchmark's own cost.
type discardWriter struct {
	header http.Header
	code   int
	wrote  int // body bytes so far
	failed bool
}

const errorWindow = 1 << 10

func newDiscardWriter() *discardWriter { return &discardWriter{header: http.Header{}} }

func (w *discardWriter) Header() http.Header { return w.header }
func (w *discardWriter) WriteHeader(code int) {
	if w.code == 0 {
		w.code = code
	}
}
func (w *discardWriter) Write(b []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	if w.wrote < errorWindow {
		w.failed = w.failed || bytes.Contains(b[:min(len(b), errorWindow-w.wrote)], []byte("odata.error"))
	}
	w.wrote += len(b)
	return len(b), nil
}

// typicalEntityJSON is entity i of partition pk as the SDKs send it: ten
// properties of every common type, about 380 bytes (bench's data set).
func typicalEntityJSON(pk string, i int) string {
	return fmt.Sprintf(`{"PartitionKey":%q,"RowKey":"r%06d","Name":"customer-%09d","Email":"user%09d@example.com","City":"Lisbon",`+
		`"Note":"note %016x %016x","Count":%d,"Bucket":%d,"Score@odata.type":"Edm.Int64","Score":"%d","Amount":%g,"Active":%t,`+
		`"Created@odata.type":"Edm.DateTime","Created":"2024-01-02T03:04:%02dZ"}`,
		pk, i, i, i, uint64(i)*0x9e3779b97f4a7c15, ^(uint64(i) * 0x9e3779b97f4a7c15), i%1000, i%64, int64(i)<<33, float64(i)*1.25, i%2 == 0, i%60)
}

// typicalBatch is a $batch of n inserts of typical entities into table
// things, partition pk, and where each entity's JSON lies in it.
func typicalBatch(pk string, n int) (body []byte, entities [][2]int) {
	var b bytes.Buffer
	b.WriteString("--" + batchBoundary + "\r\nContent-Type: multipart/mixed; boundary=changeset_c0\r\n\r\n")
	for i := range n {
		b.WriteString("--changeset_c0\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\n")
		b.WriteString("POST http://127.0.0.1:10002/devstoreaccount1/things HTTP/1.1\r\nContent-Type: application/json\r\n" +
			"Accept: application/json;odata=minimalmetadata\r\nPrefer: return-no-content\r\nDataServiceVersion: 3.0;\r\n\r\n")
		start := b.Len()
		b.WriteString(typicalEntityJSON(pk, i))
		entities = append(entities, [2]int{start, b.Len()})
		b.WriteString("\r\n")
	}
	b.WriteString("--changeset_c0--\r\n--" + batchBoundary + "--\r\n")
	return b.Bytes(), entities
}

// BenchmarkBatchOverFloor is a $batch of 100 typical inserts through
// the handler ("handler", its response dropped as a connection would
// take it) beside the library's floor for the same work
// ("library": the same bodies decoded with RawEntity.UnmarshalJSON and
// inserted with one SubmitTransaction), each on a store of its own. The
// difference of their ns/entity is the server's own cost per loaded
// entity without net/http; allocs/op too, per 100 entities.
//
// Reproduce: go test ./server -run XXX -bench BatchOverFloor -benchmem
func BenchmarkBatchOverFloor(b *testing.B) {
	for _, side := range []string{"handler", "library"} {
		b.Run(side, func(b *testing.B) {
			db, err := tablestore.OpenInMemory(&tablestore.Options{NoSync: true})
			if err != nil {
				b.Fatal(err)
			}
			defer db.Close()
			ctx := context.Background()
			if _, err := db.CreateTable(ctx, "things"); err != nil {
				b.Fatal(err)
			}
			h, err := New(db, &Options{Anonymous: true})
			if err != nil {
				b.Fatal(err)
			}
			const pkPrefix = `"PartitionKey":"p`
			body, ents := typicalBatch("p00000", 100)
			var offsets []int // of the partition's number
			for i := 0; ; {
				j := bytes.Index(body[i:], []byte(pkPrefix))
				if j < 0 {
					break
				}
				offsets = append(offsets, i+j+len(pkPrefix))
				i += j + 1
			}
			raws := make([]tablestore.RawEntity, len(ents))
			actions := make([]tablestore.TransactionAction, len(ents))
			b.ReportAllocs()
			b.SetBytes(int64(len(body)))
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if i > 0 && i%500 == 0 { // a fresh table now and then bounds the store's size
					b.StopTimer()
					if err := db.DeleteTable(ctx, "things"); err != nil {
						b.Fatal(err)
					}
					if _, err := db.CreateTable(ctx, "things"); err != nil {
						b.Fatal(err)
					}
					b.StartTimer()
				}
				pk := fmt.Sprintf("%05d", i%500)
				for _, o := range offsets {
					copy(body[o:], pk)
				}
				if side == "library" {
					for k, e := range ents {
						if err := raws[k].UnmarshalJSON(body[e[0]:e[1]]); err != nil {
							b.Fatal(err)
						}
						actions[k] = tablestore.TransactionAction{Type: tablestore.ActionInsert, Entity: &raws[k]}
					}
					if err := db.Table("things").SubmitTransaction(ctx, actions); err != nil {
						b.Fatal(err)
					}
					continue
				}
				r := httptest.NewRequest("POST", "/devstoreaccount1/$batch", bytes.NewReader(body))
				r.Header.Set("Content-Type", "multipart/mixed; boundary="+batchBoundary)
				w := newDiscardWriter()
				h.ServeHTTP(w, r)
				if w.code != http.StatusAccepted || w.failed {
					b.Fatalf("status %d, failed %v", w.code, w.failed)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(ents)), "ns/entity")
		})
	}
}

// BenchmarkBatchParse is the server's own work on a $batch of 100
// typical inserts before the store's: the envelope, the sub-requests and
// their entities decoded ("parse"), beside the entities' decoding alone
// ("decode", the library floor's share of it). No store is written.
//
// Reproduce: go test ./server -run XXX -bench BatchParse -benchmem
func BenchmarkBatchParse(b *testing.B) {
	db, err := tablestore.OpenInMemory(&tablestore.Options{NoSync: true})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	hd, err := New(db, &Options{Anonymous: true})
	if err != nil {
		b.Fatal(err)
	}
	h := hd.(*handler)
	body, ents := typicalBatch("p00000", 100)
	ct := "multipart/mixed; boundary=" + batchBoundary
	b.Run("parse", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			sc := batchScratches.Get().(*batchScratch)
			subs, err := h.parseBatch(ct, body, sc)
			if err != nil {
				b.Fatal(err)
			}
			sc.raws = slices.Grow(sc.raws[:0], len(subs))[:len(subs)] // as batch keeps them
			for i := range subs {
				if _, _, err := subs[i].action(&sc.raws[i], false); err != nil {
					b.Fatal(err)
				}
			}
			sc.put(true)
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(ents)), "ns/entity")
	})
	b.Run("decode", func(b *testing.B) {
		b.ReportAllocs()
		raws := make([]tablestore.RawEntity, len(ents))
		for b.Loop() {
			for k, e := range ents {
				raws[k].Reset()
				if err := raws[k].UnmarshalJSON(body[e[0]:e[1]]); err != nil {
					b.Fatal(err)
				}
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(ents)), "ns/entity")
	})
}

// BenchmarkPageOverFloor reads a page of 1,000 entities without
// metadata through the handler ("handler", its response dropped) beside the library's floor
// for the same page ("library": the library's AppendPageJSON into a reused
// buffer); the difference of their ns/entity is the server's own cost
// per paged entity without net/http.
//
// Reproduce: go test ./server -run XXX -bench PageOverFloor -benchmem
func BenchmarkPageOverFloor(b *testing.B) {
	db := benchStore(b)
	h, err := New(db, &Options{Anonymous: true})
	if err != nil {
		b.Fatal(err)
	}
	b.Run("handler", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			w := newDiscardWriter()
			r := httptest.NewRequest("GET", "/devstoreaccount1/t03()?$top=1000", nil)
			r.Header.Set("Accept", "application/json;odata=nometadata")
			h.ServeHTTP(w, r)
			if w.code != http.StatusOK || w.failed {
				b.Fatal(w.code)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*1000), "ns/entity")
	})
	b.Run("library", func(b *testing.B) {
		b.ReportAllocs()
		opts := &tablestore.JSONOptions{Metadata: tablestore.NoMetadata}
		var buf []byte
		for b.Loop() {
			var err error
			if buf, _, err = root.AppendPageJSON(db.Table("t03"), context.Background(), buf[:0], tablestore.Query{Top: 1000}, *opts, nil); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*1000), "ns/entity")
	})
}

// BenchmarkBatchSplit splits a $batch of 100 typical inserts into its
// changeset ("outer") and the changeset into its parts ("inner"): the
// delimiters' search, the largest share of the envelope's reading.
//
// Reproduce: go test ./server -run XXX -bench BatchSplit -benchmem
func BenchmarkBatchSplit(b *testing.B) {
	body, _ := typicalBatch("p00000", 100)
	outer, err := splitMultipart(body, batchBoundary, 1, nil)
	if err != nil || len(outer) != 1 {
		b.Fatal(outer, err)
	}
	changeset := outer[0].body
	var parts []mimePart
	for _, c := range []struct {
		name, boundary string
		body           []byte
		max, want      int
	}{{"outer", batchBoundary, body, 1, 1}, {"inner", "changeset_c0", changeset, 100, 100}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if parts, err = splitMultipart(c.body, c.boundary, c.max, parts); err != nil || len(parts) != c.want {
					b.Fatal(len(parts), err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*100), "ns/entity")
		})
	}
}
