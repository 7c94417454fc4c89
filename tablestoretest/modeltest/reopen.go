package modeltest

import (
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	ts "github.com/tablestore/tablestore"
)

// reopen closes the store, checks the closed handle refuses work, opens
// it again through the Opener and checks every table against the model.
// What the runner knows of versions (the ETag pairs) survives: the
// reopened store must serve the same versions.
func (r *runner) reopen() {
	if r.cfg.Dir != "" {
		r.t.Logf("reopen at op %d: %s", r.op, r.storeFiles())
	}
	old := r.db
	tb := old.Table(tableBases[0])
	if err := old.Close(); err != nil {
		r.failf("close: %v", err)
	}
	r.db = nil
	if _, err := tb.Get(r.ctx, "p", "r", nil); !errors.Is(err, ts.ErrClosed) {
		r.failf("Get after Close: %v, want ErrClosed", err)
	}
	r.open()
	r.verifyAll()
}

// storeFiles describes the store's files: how many sstables there are and
// the highest file number, which counts flushes and compactions.
func (r *runner) storeFiles() string {
	ssts, _ := filepath.Glob(filepath.Join(r.cfg.Dir, "*.sst"))
	highest := 0
	for _, f := range ssts {
		n, _ := strconv.Atoi(strings.TrimSuffix(filepath.Base(f), ".sst"))
		highest = max(highest, n)
	}
	return fmt.Sprintf("%d sstables, highest file number %d", len(ssts), highest)
}

// verifyAll compares the table listing and every table's full contents.
func (r *runner) verifyAll() {
	got, err := r.listAllTables("", 0)
	if err != nil {
		r.failf("list tables: %v", err)
	}
	want := r.ref.m.TableNames()
	if strings.Join(got, ",") != strings.Join(want, ",") {
		r.failf("tables: store %q, model %q", got, want)
	}
	for _, name := range want {
		es, err := r.pages(ts.Query{}, r.db.Table(name).QueryPage)
		if err != nil {
			r.failf("scan %s: %v", name, err)
		}
		ms, err := r.ref.m.Query(name, ts.Query{})
		if err != nil {
			r.failf("model scan %s: %v", name, err)
		}
		r.sameEntities(name, es, ms)
	}
}
