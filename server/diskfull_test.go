package server

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tablestore/tablestore"
	"github.com/tablestore/tablestore/driver"
	"github.com/tablestore/tablestore/internal/engine"
)

// fullDisk is a store whose disk fills up on demand: while full is set,
// commits fail as the engine's do on a full disk, and Health says so.
type fullDisk struct {
	driver.Conn
	full *atomic.Bool
}

func (c fullDisk) noSpace() error {
	if c.full.Load() {
		return fmt.Errorf("%w: writes are refused until space is freed on the store's disk; reads go on", driver.ErrNoSpace)
	}
	return nil
}

func (c fullDisk) Health() error { return c.noSpace() }

func (c fullDisk) Table(name string) driver.Table { return fullDiskTable{c.Conn.Table(name), c} }

type fullDiskTable struct {
	driver.Table
	c fullDisk
}

func (t fullDiskTable) Commit(ctx context.Context, actions []driver.Action) (driver.CommitResult, error) {
	if err := t.c.noSpace(); err != nil {
		return driver.CommitResult{}, err
	}
	return t.Table.Commit(ctx, actions)
}

// A full disk answers writes 503 ServerBusy with Retry-After and a message
// that says so, keeps reads at 200, and shows in /readyz (503) and
// /healthz (200, naming it); all clear once space is back.
func TestDiskFullAnswers(t *testing.T) {
	conn, err := engine.OpenInMemory(engine.Options{CacheSize: 1 << 20, MemTableSize: 1 << 20, PageScanLimit: 1000,
		PageTimeLimit: time.Second, Clock: time.Now, WriteTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	full := new(atomic.Bool)
	db, err := tablestore.OpenDriver(fullDisk{conn, full}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.CreateTable(context.Background(), "things"); err != nil {
		t.Fatal(err)
	}
	h, err := New(db, &Options{Anonymous: true})
	if err != nil {
		t.Fatal(err)
	}
	admin, err := NewAdminHandler(AdminOptions{Stores: map[string]*tablestore.DB{DevAccount: db}})
	if err != nil {
		t.Fatal(err)
	}
	insert := func(rk string) *httptest.ResponseRecorder {
		r := httptest.NewRequest("POST", "/devstoreaccount1/things", strings.NewReader(`{"PartitionKey":"p","RowKey":"`+rk+`"}`))
		r.Header.Set("Content-Type", "application/json")
		return serve(h, r)
	}
	get := func(handler http.Handler, path string) *httptest.ResponseRecorder {
		r := httptest.NewRequest("GET", path, nil)
		r.Host = "127.0.0.1" // the admin listener answers loopback hosts only
		return serve(handler, r)
	}
	if w := insert("a"); w.Code != http.StatusCreated {
		t.Fatalf("insert: %d %s", w.Code, w.Body)
	}

	full.Store(true)
	w := insert("b")
	if w.Code != http.StatusServiceUnavailable || w.Header().Get("x-ms-error-code") != "ServerBusy" ||
		w.Header().Get("Retry-After") == "" || !strings.Contains(w.Body.String(), "disk is full") {
		t.Fatalf("insert on a full disk: %d %v %s", w.Code, w.Header(), w.Body)
	}
	if w := get(h, "/devstoreaccount1/things(PartitionKey='p',RowKey='a')"); w.Code != http.StatusOK {
		t.Fatalf("read on a full disk: %d %s", w.Code, w.Body)
	}
	if w := get(admin, "/readyz"); w.Code != http.StatusServiceUnavailable || !strings.Contains(w.Body.String(), "disk full") {
		t.Fatalf("readyz on a full disk: %d %s", w.Code, w.Body)
	}
	if w := get(admin, "/healthz"); w.Code != http.StatusOK || !strings.Contains(w.Body.String(), "disk_full") {
		t.Fatalf("healthz on a full disk: %d %s", w.Code, w.Body)
	}

	full.Store(false)
	if w := insert("b"); w.Code != http.StatusCreated {
		t.Fatalf("insert after space returned: %d %s", w.Code, w.Body)
	}
	if w := get(admin, "/readyz"); w.Code != http.StatusOK {
		t.Fatalf("readyz after space returned: %d %s", w.Code, w.Body)
	}
	if w := get(admin, "/healthz"); strings.Contains(w.Body.String(), "disk_full") {
		t.Fatalf("healthz after space returned: %s", w.Body)
	}
}

// A closed store (the server shutting down) answers 503 ServerBusy, which
// clients retry against the restarted server, though the library's own
// code for it (StoreClosed) is not retryable.
func TestClosedStoreAnswersServerBusy(t *testing.T) {
	h, db := newTestHandler(t, &Options{Anonymous: true})
	db.Close()
	w := serve(h, httptest.NewRequest("GET", "/devstoreaccount1/things(PartitionKey='p',RowKey='a')", nil))
	if w.Code != http.StatusServiceUnavailable || w.Header().Get("x-ms-error-code") != "ServerBusy" {
		t.Fatalf("%d %v %s", w.Code, w.Header(), w.Body)
	}
}
