package azure

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	ts "github.com/tablestore/tablestore"
	"github.com/tablestore/tablestore/driver"
	"github.com/tablestore/tablestore/edm"
	"github.com/tablestore/tablestore/filter"
)

// The optional driver interfaces, served by tablestore's server's
// extension endpoints (ext.go); on any other service each answers
// NotImplemented.
var (
	_ driver.ChangeFeeder = (*table)(nil)
	_ driver.Indexer      = (*table)(nil)
	_ driver.IndexSizer   = (*table)(nil)
	_ driver.TTLTable     = (*table)(nil)
	_ driver.ExpiryStats  = (*table)(nil)
	_ driver.RangeDeleter = (*table)(nil)
	_ driver.StatsReader  = (*conn)(nil)
)

// ---- change feed ----

type feedJSON struct {
	Enabled          bool    `json:"enabled"`
	RetentionSeconds float64 `json:"retentionSeconds,omitempty"`
	Images           string  `json:"images,omitempty"`
	Oldest           string  `json:"oldest,omitempty"`
	Latest           string  `json:"latest,omitempty"`
}

func (t *table) EnableChangeFeed(ctx context.Context, s driver.ChangeFeedSettings) error {
	if err := t.c.begin(ctx); err != nil {
		return err
	}
	defer t.c.end()
	in := feedJSON{RetentionSeconds: s.Retention.Seconds(), Images: s.Images.String()}
	return t.c.ext.call(ctx, "PUT", tablePath(t.name, "changefeed"), nil, struct {
		RetentionSeconds float64 `json:"retentionSeconds"`
		Images           string  `json:"images"`
	}{in.RetentionSeconds, in.Images}, nil)
}

func (t *table) DisableChangeFeed(ctx context.Context) error {
	if err := t.c.begin(ctx); err != nil {
		return err
	}
	defer t.c.end()
	return t.c.ext.call(ctx, "DELETE", tablePath(t.name, "changefeed"), nil, nil, nil)
}

// parseFeedCursor reads a position cursor, "TABLE.SEQ".
func parseFeedCursor(s string) (table, seq uint64, err error) {
	a, b, ok := strings.Cut(s, ".")
	if ok {
		if table, err = strconv.ParseUint(a, 10, 64); err == nil {
			if seq, err = strconv.ParseUint(b, 10, 64); err == nil {
				return table, seq, nil
			}
		}
	}
	return 0, 0, fmt.Errorf("%w: azure: the server sent the cursor %q", driver.ErrCorrupt, s)
}

func (t *table) ChangeFeed(ctx context.Context) (driver.ChangeFeedState, error) {
	if err := t.c.begin(ctx); err != nil {
		return driver.ChangeFeedState{}, err
	}
	defer t.c.end()
	var f feedJSON
	if err := t.c.ext.call(ctx, "GET", tablePath(t.name, "changefeed"), nil, nil, &f); err != nil {
		return driver.ChangeFeedState{}, err
	}
	st := driver.ChangeFeedState{Enabled: f.Enabled}
	if !f.Enabled {
		return st, nil
	}
	st.Settings.Retention = time.Duration(f.RetentionSeconds * float64(time.Second))
	var ok bool
	if st.Settings.Images, ok = driver.ParseImageMode(f.Images); !ok {
		return st, fmt.Errorf("%w: azure: the server sent the image mode %q", driver.ErrCorrupt, f.Images)
	}
	var err error
	if st.Table, st.Oldest, err = parseFeedCursor(f.Oldest); err != nil {
		return st, err
	}
	if _, st.End, err = parseFeedCursor(f.Latest); err != nil {
		return st, err
	}
	return st, nil
}

type changeJSON struct {
	Cursor       string          `json:"cursor"`
	Seq          uint64          `json:"seq"`
	Op           string          `json:"op"`
	PartitionKey string          `json:"partitionKey"`
	RowKey       string          `json:"rowKey"`
	ToRowKey     string          `json:"toRowKey"`
	Timestamp    string          `json:"timestamp"`
	ETag         string          `json:"etag"`
	Expiry       string          `json:"expiry"`
	Index        int             `json:"index"`
	Count        int             `json:"count"`
	Kind         string          `json:"kind"`
	Entity       json.RawMessage `json:"entity"`
}

type changesPageJSON struct {
	Changes []changeJSON `json:"changes"`
	Cursor  string       `json:"cursor"`
	More    bool         `json:"more"`
	Dropped bool         `json:"dropped"`
}

// record turns a change of the wire into the driver's record.
func (c *changeJSON) record() (driver.ChangeRecord, error) {
	bad := func(what string) error {
		return fmt.Errorf("%w: azure: the server sent a change with %s", driver.ErrCorrupt, what)
	}
	op, ok := driver.ParseChangeOp(c.Op)
	if !ok {
		return driver.ChangeRecord{}, bad("the operation " + strconv.Quote(c.Op))
	}
	kind, ok := driver.ParseCommitKind(c.Kind)
	if !ok {
		return driver.ChangeRecord{}, bad("the commit kind " + strconv.Quote(c.Kind))
	}
	ticks, err := edm.ParseDateTime(c.Timestamp, edm.LiteralSyntax)
	if err != nil {
		return driver.ChangeRecord{}, bad("the timestamp " + strconv.Quote(c.Timestamp))
	}
	r := driver.ChangeRecord{Seq: c.Seq, Op: op, Kind: kind, Index: c.Index, Count: c.Count, Timestamp: ticks,
		PartitionKey: c.PartitionKey, RowKey: c.RowKey, ToRowKey: c.ToRowKey}
	if op == driver.ChangeExpire {
		removed, ok := timeOfETag(c.ETag)
		if !ok {
			return driver.ChangeRecord{}, bad("the ETag " + strconv.Quote(c.ETag))
		}
		r.Removed = edm.TicksFromTime(removed)
		if r.Expiry, err = edm.ParseDateTime(c.Expiry, edm.LiteralSyntax); err != nil {
			return driver.ChangeRecord{}, bad("the expiry " + strconv.Quote(c.Expiry))
		}
	}
	if len(c.Entity) > 0 {
		row, err := decodeEntity(c.Entity, c.ETag)
		if err != nil {
			return driver.ChangeRecord{}, err
		}
		r.Record = row.Record
	}
	return r, nil
}

// feedWait is a long-poll's wait: WaitChanges returns after it even
// without a change (a wake-up the contract allows), and calls again.
const feedWait = 25 * time.Second

// feedState is a table's feed reads: a page a long-poll brought, kept
// for the ReadChanges that follows the WaitChanges, so a follower costs
// one round trip per batch of changes.
type feedState struct {
	mu   sync.Mutex
	last driver.ChangesRequest // the last read's request
	// kept is the page a long-poll read for the request keptFor.
	kept    *changesPageJSON
	keptFor driver.ChangesRequest
}

func (t *table) readPage(ctx context.Context, req driver.ChangesRequest, wait time.Duration) (*changesPageJSON, error) {
	q := url.Values{"limit": {strconv.Itoa(min(max(req.Limit, 1), ts.MaxChangesPage))}}
	switch {
	case req.FromTime != 0:
		q.Set("from", edm.TimeFromTicks(req.FromTime).UTC().Format(time.RFC3339Nano))
	case req.Table == 0 && req.After == 0:
		q.Set("from", "beginning")
	default:
		q.Set("from", strconv.FormatUint(req.Table, 10)+"."+strconv.FormatUint(req.After, 10))
	}
	if req.PartitionKey != "" {
		q.Set("partitionKey", req.PartitionKey)
	}
	if wait > 0 {
		q.Set("wait", strconv.FormatFloat(wait.Seconds(), 'f', -1, 64))
	}
	var page changesPageJSON
	if err := t.c.ext.call(ctx, "GET", tablePath(t.name, "changes"), q, nil, &page); err != nil {
		return nil, err
	}
	return &page, nil
}

func (t *table) ReadChanges(ctx context.Context, req driver.ChangesRequest, emit func(driver.ChangeRecord) error) (driver.ChangesResult, error) {
	if err := t.c.begin(ctx); err != nil {
		return driver.ChangesResult{}, err
	}
	defer t.c.end()
	t.feed.mu.Lock()
	page := t.feed.kept
	if page != nil && t.feed.keptFor != req {
		page = nil
	}
	t.feed.kept = nil
	t.feed.last = req
	t.feed.mu.Unlock()
	if page == nil {
		var err error
		if page, err = t.readPage(ctx, req, 0); err != nil {
			return driver.ChangesResult{}, err
		}
	}
	for i := range page.Changes {
		r, err := page.Changes[i].record()
		if err != nil {
			return driver.ChangesResult{}, err
		}
		if err := emit(r); err != nil {
			return driver.ChangesResult{}, err
		}
	}
	table, last, err := parseFeedCursor(page.Cursor)
	if err != nil {
		return driver.ChangesResult{}, err
	}
	return driver.ChangesResult{Table: table, Last: last, End: last, More: page.More, Dropped: page.Dropped}, nil
}

// WaitChanges long-polls the server from after, for the request of the
// last ReadChanges, and keeps the page it brings for the next one.
// It holds no operation slot while it waits, so Close does not wait for
// it: Close ends it, with ErrClosed.
func (t *table) WaitChanges(ctx context.Context, after uint64) error {
	if err := t.c.begin(ctx); err != nil {
		return err
	}
	t.c.end()
	t.feed.mu.Lock()
	req := t.feed.last
	t.feed.mu.Unlock()
	req.After, req.FromTime = after, 0
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-t.c.done:
			cancel()
		case <-wctx.Done():
		}
	}()
	page, err := t.readPage(wctx, req, feedWait)
	if err != nil {
		select {
		case <-t.c.done:
			return driver.ErrClosed
		default:
		}
		return err
	}
	t.feed.mu.Lock()
	t.feed.kept, t.feed.keptFor = page, req
	t.feed.mu.Unlock()
	return nil
}

// ---- indexes ----

type indexJSON struct {
	Name        string   `json:"name"`
	Properties  []string `json:"properties"`
	Partitioned bool     `json:"partitioned"`
	Unique      bool     `json:"unique"`
	State       string   `json:"state"`
	Done        int64    `json:"done"`
	Total       int64    `json:"total"`
	Entries     int64    `json:"entries"`
	Bytes       int64    `json:"bytes"`
}

// indexID is the identity the driver gives an index: its name. The
// server keeps the real identities and plans its own index reads.
func indexID(name string) string { return strings.ToLower(name) }

func (t *table) CreateIndex(ctx context.Context, spec driver.IndexSpec) error {
	if err := t.c.begin(ctx); err != nil {
		return err
	}
	defer t.c.end()
	in := struct {
		Properties  []string `json:"properties"`
		Partitioned bool     `json:"partitioned"`
		Unique      bool     `json:"unique"`
	}{spec.Properties, spec.Partitioned, spec.Unique}
	return t.c.ext.call(ctx, "PUT", tablePath(t.name, "indexes/"+url.PathEscape(spec.Name)), nil, in, nil)
}

func (t *table) DropIndex(ctx context.Context, name string) error {
	if err := t.c.begin(ctx); err != nil {
		return err
	}
	defer t.c.end()
	return t.c.ext.call(ctx, "DELETE", tablePath(t.name, "indexes/"+url.PathEscape(name)), nil, nil, nil)
}

func (t *table) listIndexes(ctx context.Context) ([]indexJSON, error) {
	if err := t.c.begin(ctx); err != nil {
		return nil, err
	}
	defer t.c.end()
	var out struct {
		Value []indexJSON `json:"value"`
	}
	if err := t.c.ext.call(ctx, "GET", tablePath(t.name, "indexes"), nil, nil, &out); err != nil {
		return nil, err
	}
	return out.Value, nil
}

func (t *table) Indexes(ctx context.Context) ([]driver.IndexStatus, error) {
	ixs, err := t.listIndexes(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]driver.IndexStatus, len(ixs))
	for i, ix := range ixs {
		st, ok := driver.ParseIndexState(ix.State)
		if !ok {
			return nil, fmt.Errorf("%w: azure: the server sent the index state %q", driver.ErrCorrupt, ix.State)
		}
		out[i] = driver.IndexStatus{IndexSpec: driver.IndexSpec{Name: ix.Name, Properties: ix.Properties,
			Partitioned: ix.Partitioned, Unique: ix.Unique}, ID: indexID(ix.Name), State: st, Done: ix.Done, Total: ix.Total}
	}
	return out, nil
}

func (t *table) IndexSizes(ctx context.Context) (map[string]driver.TableStats, error) {
	ixs, err := t.listIndexes(ctx)
	if err != nil {
		return nil, err
	}
	out := make(map[string]driver.TableStats, len(ixs))
	for _, ix := range ixs {
		out[indexID(ix.Name)] = driver.TableStats{Entities: ix.Entries, Bytes: ix.Bytes}
	}
	return out, nil
}

var _ driver.ServerPlanner = (*table)(nil)

// PlansKeyOrderReads implements driver.ServerPlanner: tablestore's server
// plans its own index reads from the filter (QueryIndexPage below), so
// the library need not list the indexes for every filtered query.
func (t *table) PlansKeyOrderReads() bool { return true }

// QueryIndexPage answers a key-order read with the plain query: the
// server plans its own index reads from the filter, so the page is the
// same. A read in the index's own order (Query.Index) is the server's
// index query; its continuation token is the position, opaque here.
func (t *table) QueryIndexPage(ctx context.Context, q *driver.IndexQueryRequest, emit func(driver.Row) error) (driver.IndexPageResult, error) {
	if q.Scan == nil || !q.Scan.Order {
		res, err := t.QueryPage(ctx, q.Query, emit)
		return driver.IndexPageResult{PageResult: res}, err
	}
	if err := t.c.begin(ctx); err != nil {
		return driver.IndexPageResult{}, err
	}
	defer t.c.end()
	v := url.Values{"index": {q.Scan.Index.Name}}
	if q.Query.Filter != nil {
		v.Set("$filter", filter.Format(q.Query.Filter))
	}
	if q.Query.Select != nil {
		v.Set("$select", selectList(q.Query.Select))
	}
	if q.Query.Top > 0 {
		v.Set("$top", strconv.Itoa(q.Query.Top))
	}
	if len(q.Next) > 0 {
		v.Set("continuation", string(q.Next))
	}
	next, err := t.extQueryPage(ctx, v, emit)
	if err != nil {
		return driver.IndexPageResult{}, err
	}
	var res driver.IndexPageResult
	if next != "" {
		res.More, res.Next = true, []byte(next)
	}
	return res, nil
}

// ---- TTL ----

type ttlJSON struct {
	DefaultSeconds float64 `json:"defaultSeconds"`
	Property       string  `json:"property"`
}

func (t *table) SetTTL(ctx context.Context, s driver.TTL) error {
	if err := t.c.begin(ctx); err != nil {
		return err
	}
	defer t.c.end()
	return t.c.ext.call(ctx, "PUT", tablePath(t.name, "ttl"), nil, ttlJSON{DefaultSeconds: s.Default.Seconds(), Property: s.Property}, nil)
}

func (t *table) TTL(ctx context.Context) (driver.TTL, error) {
	if err := t.c.begin(ctx); err != nil {
		return driver.TTL{}, err
	}
	defer t.c.end()
	var s ttlJSON
	if err := t.c.ext.call(ctx, "GET", tablePath(t.name, "ttl"), nil, nil, &s); err != nil {
		return driver.TTL{}, err
	}
	return driver.TTL{Default: time.Duration(s.DefaultSeconds * float64(time.Second)).Round(time.Microsecond), Property: s.Property}, nil
}

type statsJSON struct {
	Entities  int64 `json:"entities"`
	Bytes     int64 `json:"bytes"`
	Unflushed bool  `json:"unflushed"`
	Expired   int64 `json:"expired"`
}

func (t *table) Expired(ctx context.Context) (int64, error) {
	if err := t.c.begin(ctx); err != nil {
		return 0, err
	}
	defer t.c.end()
	var s statsJSON
	if err := t.c.ext.call(ctx, "GET", tablePath(t.name, "stats"), nil, nil, &s); err != nil {
		return 0, err
	}
	if s.Expired < 0 {
		return 0, &driver.Error{Code: edm.CodeNotImplemented, Message: "the server does not count expired entities"}
	}
	return s.Expired, nil
}

// ---- keyspace ----

// DeleteRange is the server's range deletion: one atomic write there.
func (t *table) DeleteRange(ctx context.Context, pk, from, to string) (driver.DeleteRangeResult, error) {
	if err := t.c.begin(ctx); err != nil {
		return driver.DeleteRangeResult{}, err
	}
	defer t.c.end()
	q := url.Values{"pk": {pk}}
	if from != "" {
		q.Set("from", from)
	}
	if to != "" {
		q.Set("to", to)
	}
	if err := t.c.ext.call(ctx, "DELETE", tablePath(t.name, "partition"), q, nil, nil); err != nil {
		return driver.DeleteRangeResult{}, err
	}
	return driver.DeleteRangeResult{Atomic: true, Deleted: -1}, nil
}

// ---- stats ----

func (c *conn) TableStats(ctx context.Context, name string) (driver.TableStats, error) {
	if err := c.begin(ctx); err != nil {
		return driver.TableStats{}, err
	}
	defer c.end()
	var s statsJSON
	if err := c.ext.call(ctx, "GET", tablePath(name, "stats"), nil, nil, &s); err != nil {
		return driver.TableStats{}, err
	}
	return driver.TableStats{Entities: s.Entities, Bytes: s.Bytes, Unflushed: s.Unflushed}, nil
}
