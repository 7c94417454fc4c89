package tablestoretest

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"time"

	"github.com/tablestore/tablestore"
	"github.com/tablestore/tablestore/server"
)

// Kit is a Server's machinery without a test or a listener: the REST
// handler over a swappable in-memory store, with its fault rules, clock
// and request log. Programs that serve the kit themselves (over their
// own listener, with the rules and clock set over HTTP) build on it;
// tests use Server, whose methods fail the test instead of returning
// errors. A Kit is safe for concurrent use.
type Kit struct {
	w       *world
	clock   *Clock
	faults  faultSet
	log     requestLog
	account string
	key     string
	maxBody int64 // the handler's MaxBodyBytes
}

// NewKit opens an empty in-memory store and the handler serving it with
// opts (nil: defaults; a nil Now is set to the kit's Clock). Close
// releases it.
func NewKit(opts *server.Options) (*Kit, error) {
	var o server.Options
	if opts != nil {
		o = *opts
	}
	k := &Kit{clock: new(Clock), account: server.DevAccount, key: server.DevKey, maxBody: o.MaxBodyBytes}
	if k.maxBody <= 0 {
		k.maxBody = server.DefaultMaxBodyBytes
	}
	if o.Now == nil {
		o.Now = k.clock.Now
	}
	if o.Account != "" {
		k.account = o.Account
	}
	if len(o.Keys) > 0 {
		k.key = o.Keys[0]
	}
	k.w = &world{clock: k.clock, newHandler: func(db *tablestore.DB) (http.Handler, error) { return server.New(db, &o) }}
	if err := k.w.start(); err != nil {
		return nil, err
	}
	return k, nil
}

// Close closes the store (and those Restore and Reset replaced).
// Requests arriving afterwards are dropped.
func (k *Kit) Close() error { return k.w.close() }

// Handler serves the REST API: the request log and the fault rules
// around the current store's handler. Mount it at the root of a server
// (path-style addressing: /{account}/...).
func (k *Kit) Handler() http.Handler { return http.HandlerFunc(k.serveHTTP) }

// Account is the account name clients address.
func (k *Kit) Account() string { return k.account }

// Key is the (first) account key.
func (k *Kit) Key() string { return k.key }

// DB is the store served now. Restore and Reset replace it (and close
// the one replaced): call DB again after either.
func (k *Kit) DB() *tablestore.DB { return k.w.cur.Load().db }

// Clock is the kit's clock (see Clock).
func (k *Kit) Clock() *Clock { return k.clock }

// Snapshot copies the whole state (see the Snapshot type).
func (k *Kit) Snapshot() (*Snapshot, error) { return k.w.snapshot() }

// Restore replaces the state with a copy of snap (see Server.Restore).
func (k *Kit) Restore(snap *Snapshot) error { return k.w.restore(snap) }

// SetBaseline makes Reset return the state to a copy of snap instead of
// an empty store (nil: an empty store again).
func (k *Kit) SetBaseline(snap *Snapshot) { k.w.setBaseline(snap) }

// Reset gives a clean slate (see Server.Reset); with parts, only those.
func (k *Kit) Reset(parts ...ResetPart) error {
	return resetWorld(k.w, &k.faults, k.clock, &k.log, parts)
}

// InjectFault validates f and adds it (see Fault); remove takes it out.
func (k *Kit) InjectFault(f Fault) (remove func(), err error) {
	_, remove, err = k.faults.add(f)
	return remove, err
}

// Load writes JSON lines into table (see Server.Load).
func (k *Kit) Load(table string, r io.Reader) error {
	return load(context.Background(), k.DB(), table, r)
}

func (k *Kit) serveHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	info := server.Classify(r, k.account)
	rec := &recorder{ResponseWriter: w}
	in := countBody(r)
	var batch []server.RequestInfo
	defer func() {
		k.log.add(RequestRecord{
			RequestInfo:   info,
			Batch:         batch,
			Method:        r.Method,
			Status:        rec.status,
			Code:          rec.Header().Get("x-ms-error-code"),
			Dropped:       rec.dropped,
			Duration:      time.Since(start),
			RequestBytes:  in.count(),
			ResponseBytes: rec.bytes,
		})
	}()
	st := k.w.cur.Load()
	if st == nil { // closed
		abort(rec)
	}
	if info.Operation == "EntityGroupTransaction" {
		batch = k.classifyBatch(r)
		if len(batch) > 0 {
			info.PartitionKey = batch[0].PartitionKey // a batch's one partition
		}
	}
	if f, ok := k.faults.pick(info); ok {
		k.applyFault(f, st, rec, r, info)
		return
	}
	st.h.ServeHTTP(rec, r)
}

// classifyBatch names a $batch request's sub-operations
// (server.ClassifyBatch), leaving its body to be read again; nil for a
// body the handler will refuse.
func (k *Kit) classifyBatch(r *http.Request) []server.RequestInfo {
	if r.Body == nil {
		return nil
	}
	b, err := io.ReadAll(io.LimitReader(r.Body, k.maxBody+1))
	r.Body = struct {
		io.Reader
		io.Closer
	}{io.MultiReader(bytes.NewReader(b), r.Body), r.Body}
	if err != nil || int64(len(b)) > k.maxBody {
		return nil
	}
	subs, err := server.ClassifyBatch(r.Header.Get("Content-Type"), b, k.account)
	if err != nil {
		return nil
	}
	return subs
}
