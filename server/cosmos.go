package server

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tablestore/tablestore/edm"
)

// The Cosmos DB for Table flavor (Options.Cosmos). This file holds its
// options and its hooks into the request path; cosmos_wire.go the
// answers' shape, cosmos_order.go the order and paging of queries and
// table lists, cosmos_ru.go request units and throttling. docs/cosmos.md
// gives each difference's source.

// CosmosDevAccount and CosmosDevKey are the Cosmos DB emulator's account
// name (as its Table connection string gives it) and its well-known key.
const (
	CosmosDevAccount = "localhost"
	CosmosDevKey     = "C2y6yDjf5/R+ob0N8A7Cgv30VRDJIWEHLM+4QDU5DE2nQ9nDuVTqobD4b8mGGyPMbIZnqyMsEcaGQy67XIw/Jw=="
)

// Cosmos limits that differ from Azure Table Storage's.
const (
	CosmosMaxRowKeyBytes = 255     // RowKey, in UTF-8 bytes
	CosmosMaxBatchBytes  = 2 << 20 // a $batch request body
)

// Order is the order Cosmos-flavored queries and table lists give.
type Order int

const (
	// OrderInsertion gives entities and tables in the order they were
	// first written since the handler started (those written before come
	// first, in key order), as Cosmos DB's recorded answers show.
	OrderInsertion Order = iota
	// OrderSeeded gives them in an order drawn from Cosmos.Seed: stable
	// for a seed, never key order by design.
	OrderSeeded
	// OrderSorted gives Azure Table Storage's key order, to tell whether
	// a failure comes from ordering or from another difference.
	OrderSorted
)

// Cosmos makes a handler answer as Cosmos DB for Table does where it
// differs from Azure Table Storage. Its zero value emulates every
// difference but throttling, which RequestUnitsPerSecond turns on; each
// other field turns one off (Storage..., CORS, CaseInsensitiveTables) or
// tunes it.
type Cosmos struct {
	// StorageLimits keeps Storage's limits: RowKey up to 1 KiB and a
	// batch body up to MaxBodyBytes. Default false: RowKey at most
	// CosmosMaxRowKeyBytes, a batch at most CosmosMaxBatchBytes.
	StorageLimits bool
	// CaseInsensitiveTables finds tables whatever the case of the name
	// a request gives, as Storage does. Default false: a name must
	// match the table's case exactly.
	CaseInsensitiveTables bool
	// CORS answers CORS as Storage does (the service properties' rules).
	// Default false: no CORS headers, preflights refused.
	CORS bool
	// StorageWire keeps Storage's error bodies, content types and
	// headers, and Storage's batch parts (their headers, no Content-ID,
	// its failed part). Default false: Cosmos's (see cosmos_wire.go).
	StorageWire bool
	// Order is the order of query results and table lists. Default
	// OrderInsertion.
	Order Order
	// Seed draws OrderSeeded's order. Default 0.
	Seed uint64
	// StoragePropertyOrder gives properties in Storage's order
	// (PartitionKey, RowKey, Timestamp, the rest by name). Default false:
	// as written, a merge's new ones appended, Timestamp last.
	StoragePropertyOrder bool
	// StorageContinuation keeps Storage's continuation: key-based, none
	// on the last page. Default false: an opaque token on every full
	// page, the last one included, then an empty page. Ignored with
	// OrderSorted, which pages as Storage does.
	StorageContinuation bool
	// StorageTimestamps gives the entities a batch writes one Timestamp,
	// as Storage does. Default false: each operation its own, each later
	// than the one before, as Cosmos DB's recorded batches show.
	StorageTimestamps bool
	// ChargeHeader sends each response's request charge in
	// x-ms-request-charge. Default false, as Cosmos DB's recorded Table
	// answers carry none.
	ChargeHeader bool
	// RequestUnitsPerSecond is the provisioned throughput: once a
	// second's worth is used up, requests are answered 429
	// TooManyRequests with x-ms-retry-after-ms until it refills.
	// Default 0: unlimited.
	RequestUnitsPerSecond float64
	// ThroughputPerTable gives each table its own RequestUnitsPerSecond;
	// requests that name no table (listing, creating tables) draw on the
	// account's. Default false: one budget for the account.
	ThroughputPerTable bool
}

// cosmosState is a handler's Cosmos flavor: its options and what it
// remembers to emulate them.
type cosmosState struct {
	opt Cosmos
	now func() time.Time

	mu sync.Mutex
	// seq numbers entities and tables in the order they were first
	// written (OrderInsertion); keys are seqKey's.
	seq  map[string]uint64
	next uint64
	// props are the entities' property orders, by seqKey
	// (cosmos_props.go).
	props map[string][]string
	// buckets hold the throughput budgets, by lowercased table name
	// ("" for the account's).
	buckets map[string]*ruBucket
}

func newCosmosState(o *Cosmos, now func() time.Time) *cosmosState {
	return &cosmosState{opt: *o, now: now, seq: map[string]uint64{}, props: map[string][]string{}, buckets: map[string]*ruBucket{}}
}

// cosmosReq is one request's Cosmos state.
type cosmosReq struct {
	// touched are the entities (seqKey) the request writes, with
	// whether it deletes them, recorded as their keys are authorized.
	touched []touchedKey
	// checkedTable is the last table whose name's case was checked.
	checkedTable string
	charge       float64
	throttled    bool
	// props are the property names of the entity the request writes, in
	// order; merge says it merges them (cosmos_props.go).
	props []string
	merge bool
	// items is how many results a query gave, when counted.
	items   int
	counted bool
}

type touchedKey struct {
	key    string
	delete bool
}

// seqKey names an entity (or, with no keys, a table) for the order map.
func seqKey(table, pk, rk string, entity bool) string {
	t := strings.ToLower(table)
	if !entity {
		return t
	}
	return t + "\x00" + pk + "\x00" + rk
}

// cosmosOn reports whether the handler is Cosmos-flavored.
func (q *request) cosmosOn() bool { return q.h.cosmos != nil }

// corsOn reports whether CORS is answered: always on Storage, on Cosmos
// only with Cosmos.CORS.
func (q *request) corsOn() bool { return q.h.cosmos == nil || q.h.cosmos.opt.CORS }

// cosmosBefore runs once a request is routed, authorized and its body
// read, before it takes a work slot: Cosmos's throughput, batch size,
// RowKey length and table-name case.
func (q *request) cosmosBefore(o *opRoute) error {
	c := q.h.cosmos
	q.cq = &cosmosReq{}
	q.cosmosRoute(o)                     // cosmos_order.go
	if err := q.throttle(); err != nil { // cosmos_ru.go
		return err
	}
	if !c.opt.StorageLimits && q.res.kind == kindBatch && len(q.body) > CosmosMaxBatchBytes {
		return errCosmosBatchTooLarge
	}
	switch q.res.kind {
	case kindTable, kindEntities, kindEntity, kindACL:
		if err := q.cosmosTableCase(q.res.table, q.res.kind == kindTable); err != nil {
			return err
		}
	}
	q.cosmosWritten() // cosmos_props.go
	if q.res.kind == kindEntity && o.op != opRead {
		return q.cosmosKeys(o.op, q.res.table, q.res.pk, q.res.rk)
	}
	return nil
}

var (
	errCosmosBatchTooLarge = apiError(http.StatusRequestEntityTooLarge, edm.CodeRequestBodyTooLarge,
		"The batch request body exceeds Cosmos DB's limit of 2 MB.")
	errCosmosEmptyKey = apiError(http.StatusBadRequest, edm.CodePropertiesNeedValue, "PartitionKey/RowKey cannot be empty")
	errCosmosRowKey   = apiError(http.StatusBadRequest, edm.CodeKeyValueTooLarge,
		"The RowKey exceeds Cosmos DB's limit of 255 bytes.")
)

// cosmosKeys checks and notes the keys of an entity a write (or a batch
// operation) addresses: Cosmos's RowKey limit, the table's case, and
// the entity for the insertion order. Storage-flavored handlers pass.
func (q *request) cosmosKeys(o op, table, pk, rk string) error {
	c := q.h.cosmos
	if c == nil || q.cq == nil {
		return nil
	}
	if !c.opt.StorageLimits && len(rk) > CosmosMaxRowKeyBytes {
		return errCosmosRowKey
	}
	if !c.opt.StorageLimits && o != opDelete && (pk == "" || rk == "") {
		return errCosmosEmptyKey
	}
	if err := q.cosmosTableCase(table, false); err != nil {
		return err
	}
	q.cq.touched = append(q.cq.touched, touchedKey{key: seqKey(table, pk, rk, true), delete: o == opDelete})
	return nil
}

// cosmosTableCase answers TableNotFound (ResourceNotFound for a table's
// own URL) when a table exists under the name in another case: Cosmos
// DB's table names are case-sensitive.
func (q *request) cosmosTableCase(table string, own bool) error {
	if q.h.cosmos.opt.CaseInsensitiveTables || table == "" || q.cq.checkedTable == table {
		return nil
	}
	code := edm.CodeTableNotFound
	if own {
		code = edm.CodeResourceNotFound
	}
	name, err := q.lookupTable(table, code)
	if err != nil {
		return nil // no such table in any case: the operation answers
	}
	if name != table {
		return fromLibraryCode(code)
	}
	q.cq.checkedTable = table
	return nil
}

// fromLibraryCode is the answer for a library error code, with Azure's
// message.
func fromLibraryCode(code edm.Code) *apiErr {
	return apiError(codeStatus[code], code, azureMessages[code])
}

// cosmosAfter runs once the operation has answered into d, before the
// answer is sent: it remembers the insertion order of what was written
// and charges the request units.
func (q *request) cosmosAfter(o opRoute, d *deferredWriter) {
	c := q.h.cosmos
	if c == nil || q.cq == nil {
		return
	}
	status := d.status
	if status == 0 {
		status = http.StatusOK
	}
	if status < 300 {
		c.noteWrites(q, o)
		q.cosmosReorder(d, status)
	}
	var in int64
	if q.in != nil {
		in = q.in.n.Load()
	}
	out := 0
	for _, b := range d.chunks {
		out += len(b)
	}
	q.charge(o, status, in, out) // cosmos_ru.go
}

// noteWrites numbers the entities and tables q created, and forgets
// those it deleted, for OrderInsertion.
func (c *cosmosState) noteWrites(q *request, o opRoute) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, t := range q.cq.touched {
		if t.delete {
			delete(c.seq, t.key)
			delete(c.props, t.key)
			continue
		}
		if len(q.cq.touched) == 1 {
			c.noteProps(t.key, q.cq.props, q.cq.merge)
		}
		if _, ok := c.seq[t.key]; !ok {
			c.next++
			c.seq[t.key] = c.next
		}
	}
	switch {
	case o.op == opCreateTable:
		var in struct{ TableName string }
		if json.Unmarshal(q.body, &in) == nil && in.TableName != "" {
			c.next++
			c.seq[seqKey(in.TableName, "", "", false)] = c.next
		}
	case o.op == opDeleteTable:
		k := seqKey(q.res.table, "", "", false)
		delete(c.seq, k)
		prefix := k + "\x00"
		for key := range c.seq {
			if strings.HasPrefix(key, prefix) {
				delete(c.seq, key)
			}
		}
		for key := range c.props {
			if strings.HasPrefix(key, prefix) {
				delete(c.props, key)
			}
		}
	}
}

// order returns the insertion number of key; 0 for one written before
// the handler started.
func (c *cosmosState) order(key string) uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.seq[key]
}

// retryAfterMillis formats a wait for x-ms-retry-after-ms.
func retryAfterMillis(d time.Duration) string {
	ms := d.Milliseconds()
	if ms < 1 {
		ms = 1
	}
	return strconv.FormatInt(ms, 10)
}
