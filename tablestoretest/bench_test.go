package tablestoretest

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/tablestore/tablestore"
	"github.com/tablestore/tablestore/internal/engine"
	"github.com/tablestore/tablestore/server"
)

// BenchmarkNewServerFirstCreateTable is a test's setup cost: a server, its
// in-process client and a first CreateTable through it; "in-process"
// addresses it by a host of its own (no listener is opened), "listening"
// asks for its URL, which opens its loopback listener.
func BenchmarkNewServerFirstCreateTable(b *testing.B) {
	for _, listen := range []bool{false, true} {
		b.Run(map[bool]string{false: "in-process", true: "listening"}[listen], func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				b.StopTimer()
				sub := &benchTB{TB: b}
				b.StartTimer()
				srv := NewServerWithOptions(sub, &server.Options{Anonymous: true})
				c := srv.InProcessClient()
				root := "http://in-process"
				if listen {
					root = srv.URL()
				}
				req, _ := http.NewRequest("POST", root+"/"+srv.Account()+"/Tables", strings.NewReader(`{"TableName":"first"}`))
				req.Header.Set("Content-Type", "application/json")
				resp, err := c.Do(req)
				if err != nil || resp.StatusCode != http.StatusCreated {
					b.Fatalf("create table: %v %v", resp, err)
				}
				resp.Body.Close()
				b.StopTimer()
				sub.cleanup()
				b.StartTimer()
			}
		})
	}
}

// benchTB runs cleanups when told to, so a benchmark can close each
// server it starts.
type benchTB struct {
	testing.TB
	fns []func()
}

func (t *benchTB) Cleanup(f func()) { t.fns = append(t.fns, f) }

func (t *benchTB) cleanup() {
	for i := len(t.fns) - 1; i >= 0; i-- {
		t.fns[i]()
	}
	t.fns = nil
}

// BenchmarkReset is Reset of a store holding one small table.
func BenchmarkReset(b *testing.B) {
	d := NewDB(b)
	ctx := context.Background()
	d.Reset() // the first Reset opens a store; later ones take the spare
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		t, err := d.DB().CreateTable(ctx, "small")
		if err == nil {
			err = t.Insert(ctx, &tablestore.Entity{PartitionKey: "p", RowKey: "r"})
		}
		if err != nil {
			b.Fatal(err)
		}
		d.w.waitAhead()
		b.StartTimer()
		d.Reset()
	}
}

// BenchmarkRestore10k is Restore of a snapshot of 10,000 entities:
// "first" alternates between two snapshots, so each Restore opens its
// copy; "again" restores one snapshot, its copy opened ahead (the test's
// own work between Restores is outside the timer).
func BenchmarkRestore10k(b *testing.B) {
	d := NewDB(b)
	ctx := context.Background()
	t, err := d.DB().CreateTable(ctx, "big")
	if err != nil {
		b.Fatal(err)
	}
	w, err := t.NewBulkWriter(nil)
	if err != nil {
		b.Fatal(err)
	}
	for i := range 10_000 {
		e := &tablestore.Entity{PartitionKey: fmt.Sprintf("p%02d", i%50), RowKey: fmt.Sprintf("r%05d", i),
			Properties: map[string]any{"Name": fmt.Sprintf("name %d", i), "N": int64(i), "F": float64(i) / 3}}
		if err := w.Add(ctx, e); err != nil {
			b.Fatal(err)
		}
	}
	if err := w.Flush(ctx); err != nil {
		b.Fatal(err)
	}
	snaps := [2]*Snapshot{d.Snapshot(), d.Snapshot()}
	check := func(b *testing.B) {
		n := 0
		for _, err := range d.DB().Table("big").Query(ctx, tablestore.Query{}) {
			if err != nil {
				b.Fatal(err)
			}
			n++
		}
		if n != 10_000 {
			b.Fatalf("restored %d entities", n)
		}
	}
	b.Run("first", func(b *testing.B) {
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			d.Restore(snaps[i%2])
			i++
		}
		b.StopTimer()
		b.ReportMetric(float64(snaps[0].Size()), "snapshot-bytes")
		check(b)
	})
	b.Run("again", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			d.Restore(snaps[0])
			b.StopTimer()
			d.w.waitAhead()
			b.StartTimer()
		}
		b.StopTimer()
		check(b)
	})
}

// BenchmarkPebbleOpenMemFS is the floor under a new server: pebble.Open
// of an empty store on a fresh MemFS with Pebble's default options (and
// the newest format, as the engine uses), then Close.
func BenchmarkPebbleOpenMemFS(b *testing.B) {
	for _, bc := range []struct {
		name string
		opts func() *pebble.Options
	}{
		{"defaults", func() *pebble.Options {
			return &pebble.Options{FS: vfs.NewMem(), FormatMajorVersion: pebble.FormatNewest}
		}},
		{"nowal", func() *pebble.Options {
			return &pebble.Options{FS: vfs.NewMem(), FormatMajorVersion: pebble.FormatNewest, DisableWAL: true}
		}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				pdb, err := pebble.Open("db", bc.opts())
				if err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				if err := pdb.Close(); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
			}
		})
	}
}

// BenchmarkEngineOpenMemFS is the kit's store alone: the engine opened
// on a fresh MemFS with the kit's options, without the DB or handler.
func BenchmarkEngineOpenMemFS(b *testing.B) {
	w := &world{clock: new(Clock)}
	b.ReportAllocs()
	for b.Loop() {
		e, err := engine.OpenFS(liveDir, vfs.NewMem(), w.engineOptions())
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		if err := e.Close(); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
}

// BenchmarkControlReset is POST /testkit/reset over loopback HTTP on a
// kit seeded with a small table: "back-to-back" resets with nothing
// between them; "after-write" resets after an insert (outside the timer,
// as a test's own work, during which the next copy opens).
func BenchmarkControlReset(b *testing.B) {
	k, err := NewKit(&server.Options{Anonymous: true})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = k.Close() })
	if err := k.Load("seed", strings.NewReader(`{"PartitionKey":"p","RowKey":"1","n":1}`+"\n")); err != nil {
		b.Fatal(err)
	}
	snap, err := k.Snapshot()
	if err != nil {
		b.Fatal(err)
	}
	k.SetBaseline(snap)
	ctl := httptest.NewServer(ControlHandler(k))
	b.Cleanup(ctl.Close)
	reset := func(b *testing.B) {
		resp, err := ctl.Client().Post(ctl.URL+ControlPrefix+"/reset", "application/json", nil)
		if err != nil {
			b.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			b.Fatalf("reset: %s", resp.Status)
		}
	}
	b.Run("back-to-back", func(b *testing.B) {
		for b.Loop() {
			reset(b)
		}
	})
	b.Run("after-write", func(b *testing.B) {
		ctx := context.Background()
		for b.Loop() {
			b.StopTimer()
			if err := k.DB().Table("seed").Insert(ctx, &tablestore.Entity{PartitionKey: "p", RowKey: "2"}); err != nil {
				b.Fatal(err)
			}
			k.w.waitAhead()
			b.StartTimer()
			reset(b)
		}
	})
}
