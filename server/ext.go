package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/tablestore/tablestore"
	"github.com/tablestore/tablestore/driver"
	"github.com/tablestore/tablestore/edm"
)

// Extension endpoints: tablestore's own operations, which Azure's API
// has no counterpart for (change feeds, secondary indexes, TTL, range
// deletions, size estimates), under /{account}/$tablestore/. Azure never
// gives a table a name starting with '$' but its own, so the SDKs'
// requests never reach them. docs/extensions.md lists them.

// extRoot is the first path segment of the extension endpoints.
const extRoot = "$tablestore"

// extAPIVersion is the version of the extension endpoints the
// capability document announces; it grows when they change
// incompatibly.
const extAPIVersion = 1

// extKind is what an extension path names.
type extKind uint8

const (
	extCaps      extKind = iota + 1 // $tablestore
	extChanges                      // tables/{t}/changes
	extFeed                         // tables/{t}/changefeed
	extIndexes                      // tables/{t}/indexes
	extIndex                        // tables/{t}/indexes/{name}
	extTTL                          // tables/{t}/ttl
	extPartition                    // tables/{t}/partition
	extStats                        // tables/{t}/stats
	extQuery                        // tables/{t}/query (ext_query.go)
	extSegments                     // tables/{t}/segments (ext_query.go)
)

var extNames = map[string]extKind{
	"changes": extChanges, "changefeed": extFeed, "indexes": extIndexes,
	"ttl": extTTL, "partition": extPartition, "stats": extStats, "query": extQuery,
	"segments": extSegments,
}

// isExtPath reports whether rest, the path after the account, is under
// the extension root.
func isExtPath(rest string) bool {
	return rest == extRoot || rest == extRoot+"/" || strings.HasPrefix(rest, extRoot+"/")
}

// parseExt routes a path under the extension root.
func parseExt(res resource, rest string) (resource, error) {
	res.kind = kindExt
	rest = strings.TrimSuffix(strings.TrimPrefix(rest, extRoot), "/")
	if rest == "" {
		res.ext = extCaps
		return res, nil
	}
	segs := strings.Split(strings.TrimPrefix(rest, "/"), "/")
	if len(segs) < 3 || len(segs) > 4 || segs[0] != "tables" {
		return res, errInvalidURI
	}
	for i, s := range segs {
		u, err := url.PathUnescape(s)
		if err != nil || u == "" {
			return res, errInvalidURI
		}
		segs[i] = u
	}
	res.table = segs[1]
	k, ok := extNames[segs[2]]
	if !ok {
		return res, errInvalidURI
	}
	if len(segs) == 4 {
		if k != extIndexes {
			return res, errInvalidURI
		}
		k, res.index = extIndex, segs[3]
	}
	res.ext = k
	return res, nil
}

// extOperationNames name the extension operations in logs and metrics.
var extOperationNames = map[extKind][2]string{ // read, write
	extCaps:      {"TablestoreCapabilities", "TablestoreCapabilities"},
	extChanges:   {"TablestoreReadChanges", "TablestoreReadChanges"},
	extFeed:      {"TablestoreGetChangeFeed", "TablestoreSetChangeFeed"},
	extIndexes:   {"TablestoreListIndexes", "TablestoreListIndexes"},
	extIndex:     {"TablestoreGetIndex", "TablestoreSetIndex"},
	extTTL:       {"TablestoreGetTTL", "TablestoreSetTTL"},
	extPartition: {"TablestoreDeleteRange", "TablestoreDeleteRange"},
	extStats:     {"TablestoreTableStats", "TablestoreTableStats"},
	extQuery:     {"TablestoreQueryIndex", "TablestoreQueryIndex"},
	extSegments:  {"TablestoreSegments", "TablestoreSegments"},
}

func extOperationName(method string, k extKind) string {
	n, ok := extOperationNames[k]
	if !ok {
		return "Unknown"
	}
	if method == http.MethodGet || method == http.MethodHead {
		return n[0]
	}
	return n[1]
}

// resolveExt resolves an extension path and method to its operation
// and the permission it needs: opRead for what reads a table (its feed,
// its indexes, its settings), opAdmin for what changes a table's
// settings, opKeyspace for range deletions, opCapabilities for the
// capability document.
func (q *request) resolveExt(method string) (opRoute, error) {
	type o = opRoute
	get := method == http.MethodGet
	switch q.res.ext {
	case extCaps:
		if get {
			return o{op: opCapabilities, run: (*request).extCapabilities}, nil
		}
	case extChanges:
		if get {
			r := o{op: opRead, run: (*request).extReadChanges}
			if q.wantsEventStream() || q.res.query.Get("wait") != "" {
				r.stream = true
			}
			return r, nil
		}
	case extFeed:
		switch method {
		case http.MethodGet:
			return o{op: opRead, run: (*request).extGetFeed}, nil
		case http.MethodPut:
			return o{op: opAdmin, body: true, run: (*request).extSetFeed}, nil
		case http.MethodDelete:
			return o{op: opAdmin, run: (*request).extDisableFeed}, nil
		}
	case extIndexes:
		if get {
			return o{op: opRead, run: (*request).extListIndexes}, nil
		}
	case extIndex:
		switch method {
		case http.MethodGet:
			return o{op: opRead, run: (*request).extGetIndex}, nil
		case http.MethodPut:
			return o{op: opAdmin, body: true, run: (*request).extCreateIndex}, nil
		case http.MethodDelete:
			return o{op: opAdmin, run: (*request).extDropIndex}, nil
		}
	case extTTL:
		switch method {
		case http.MethodGet:
			return o{op: opRead, run: (*request).extGetTTL}, nil
		case http.MethodPut:
			return o{op: opAdmin, body: true, run: (*request).extSetTTL}, nil
		}
	case extPartition:
		if method == http.MethodDelete {
			return o{op: opKeyspace, run: (*request).extDeleteRange}, nil
		}
	case extStats:
		if get {
			return o{op: opRead, run: (*request).extStats}, nil
		}
	case extQuery:
		if get {
			return o{op: opRead, run: (*request).extQuery}, nil
		}
	case extSegments:
		if get {
			return o{op: opRead, run: (*request).extSegments}, nil
		}
	default:
		return o{}, errInvalidURI
	}
	return o{}, errMethodNotAllowed
}

// extError is toAPIError keeping the library's own message: the
// extension endpoints have no Azure text to match, and the library's
// says what was wrong (which cursor, which index, which value).
func extError(err error) error {
	var ae *apiErr
	if errors.As(err, &ae) {
		return ae
	}
	var te *tablestore.Error
	if errors.As(err, &te) && !errors.Is(err, tablestore.ErrClosed) && !errors.Is(err, tablestore.ErrNoSpace) {
		status, ok := codeStatus[te.Code]
		if !ok {
			status = http.StatusBadRequest
		}
		return apiError(status, te.Code, te.Message)
	}
	return toAPIError(err)
}

func badParam(msg string) *apiErr {
	return apiError(http.StatusBadRequest, edm.CodeInvalidQueryParameterValue, msg)
}

func badBody(msg string) *apiErr {
	return apiError(http.StatusBadRequest, edm.CodeInvalidInput, "One of the request inputs is not valid: "+msg)
}

// refuseKeyRange refuses a service SAS limited to a key range: the
// operation reaches every partition of the table.
func (q *request) refuseKeyRange() error {
	if g := q.sas; g != nil && !g.account && (g.hasSPK || g.hasEPK) {
		return apiError(http.StatusForbidden, edm.CodeAuthorizationPermissionMismatch,
			"This request is not authorized to perform this operation: the signature is limited to a key range and the operation reaches the whole table.")
	}
	return nil
}

// writeExtJSON sends v as a JSON body.
func (q *request) writeExtJSON(status int, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	hd := q.w.Header()
	hd.Set("Content-Type", "application/json")
	hd.Set("Content-Length", itoa(len(b)))
	q.w.WriteHeader(status)
	_, _ = q.w.Write(b)
	return nil
}

// decodeExtBody decodes the request body into v strictly: one JSON
// object (not null, an array or a scalar), no unknown members.
func (q *request) decodeExtBody(v any) error {
	b := bytes.TrimSpace(q.body)
	if len(b) == 0 {
		return badBody("the request needs a JSON body.")
	}
	if b[0] != '{' {
		return badBody("the body must be one JSON object.")
	}
	d := json.NewDecoder(bytes.NewReader(q.body))
	d.DisallowUnknownFields()
	if err := d.Decode(v); err != nil {
		return badBody("the body is not the JSON object expected: " + err.Error())
	}
	if d.More() {
		return badBody("the body holds more than one JSON value.")
	}
	return nil
}

// Capabilities is the capability document, GET /{account}/$tablestore:
// what the extension endpoints of this server offer. It holds no data
// and needs no credential, so a client finds out what it talks to
// before its credentials are checked.
type Capabilities struct {
	// Server is "tablestore".
	Server string `json:"server"`
	// APIVersion is the version of the extension endpoints.
	APIVersion int `json:"apiVersion"`
	// Features lists what the server offers: "changes" (read and
	// long-poll a table's feed), "changes-sse" (follow it as server-sent
	// events), "changefeed" (its settings), "indexes", "indexQuery" (a
	// read in an index's order), "ttl", "deleteRange", "stats",
	// "reverseQuery" (a query read in descending key order) and
	// "segments" (a table's split positions).
	Features []string `json:"features"`
	// MaxChangesPage is the most changes one read returns.
	MaxChangesPage int `json:"maxChangesPage"`
	// MaxWaitSeconds is the longest long-poll wait.
	MaxWaitSeconds int `json:"maxWaitSeconds"`
	// KeyRangeSAS lists the endpoints a service SAS limited to a key
	// range (spk, srk, epk, erk) may use, by the names of Features:
	// "indexQuery" and "reverseQuery" answer for its range alone, "ttl"
	// holds no data. The others reach the whole table (its feed, sizes,
	// split positions, indexes' counts) and are refused with 403
	// AuthorizationPermissionMismatch.
	KeyRangeSAS []string `json:"keyRangeSAS"`
}

// ExtFeatures are the features the capability document lists.
var ExtFeatures = []string{"changes", "changes-sse", "changefeed", "indexes", "indexQuery", "ttl", "deleteRange", "stats", "reverseQuery", "segments"}

// extKeyRangeFeatures are the features a key-range SAS may use.
var extKeyRangeFeatures = []string{"indexQuery", "reverseQuery", "ttl"}

func (q *request) extCapabilities() error {
	return q.writeExtJSON(http.StatusOK, Capabilities{
		Server: "tablestore", APIVersion: extAPIVersion, Features: ExtFeatures,
		MaxChangesPage: tablestore.MaxChangesPage, MaxWaitSeconds: int(maxChangesWait / time.Second),
		KeyRangeSAS: extKeyRangeFeatures,
	})
}

// ---- change feed settings ----

type feedJSON struct {
	Enabled          bool    `json:"enabled"`
	RetentionSeconds float64 `json:"retentionSeconds,omitempty"`
	Images           string  `json:"images,omitempty"`
	Oldest           string  `json:"oldest,omitempty"`
	Latest           string  `json:"latest,omitempty"`
}

func (q *request) extGetFeed() error {
	if err := q.refuseKeyRange(); err != nil {
		return err // its oldest and latest positions are the whole table's
	}
	st, err := q.h.db.Table(q.res.table).ChangeFeed(q.r.Context())
	if err != nil {
		return extError(err)
	}
	out := feedJSON{Enabled: st.Enabled}
	if st.Enabled {
		out.RetentionSeconds = st.Options.Retention.Seconds()
		out.Images = st.Options.Images.String()
		out.Oldest, out.Latest = st.Oldest.String(), st.Latest.String()
	}
	return q.writeExtJSON(http.StatusOK, out)
}

func (q *request) extSetFeed() error {
	var in struct {
		RetentionSeconds *float64 `json:"retentionSeconds"`
		Images           string   `json:"images"`
	}
	if err := q.decodeExtBody(&in); err != nil {
		return err
	}
	var opts tablestore.ChangeFeedOptions
	if in.RetentionSeconds != nil {
		s := *in.RetentionSeconds
		if s < 1 || s > float64(tablestore.MaxTTLDefault/time.Second) {
			return badBody("retentionSeconds must be a number of seconds from 1 to 3153600000 (100 years).")
		}
		opts.Retention = time.Duration(s * float64(time.Second))
	}
	if in.Images != "" {
		var ok bool
		if opts.Images, ok = driver.ParseImageMode(in.Images); !ok {
			return badBody(`images must be "keysOnly" or "new".`)
		}
	}
	t := q.h.db.Table(q.res.table)
	if err := t.EnableChangeFeed(q.r.Context(), opts); err != nil {
		return extError(err)
	}
	return q.extGetFeed()
}

func (q *request) extDisableFeed() error {
	if err := q.h.db.Table(q.res.table).DisableChangeFeed(q.r.Context()); err != nil {
		return extError(err)
	}
	q.w.WriteHeader(http.StatusNoContent)
	return nil
}

// ---- indexes ----

// IndexJSON is one index as the index endpoints describe it.
type IndexJSON struct {
	Name        string   `json:"name"`
	Properties  []string `json:"properties"`
	Partitioned bool     `json:"partitioned"`
	Unique      bool     `json:"unique"`
	State       string   `json:"state"` // "building" or "ready"
	Done        int64    `json:"done"`
	Total       int64    `json:"total"`
	Entries     int64    `json:"entries"`
	Bytes       int64    `json:"bytes"`
}

func indexJSON(ix tablestore.IndexInfo) IndexJSON {
	return IndexJSON{Name: ix.Name, Properties: ix.Properties, Partitioned: ix.Partitioned, Unique: ix.Unique,
		State: ix.State.String(), Done: ix.Done, Total: ix.Total, Entries: ix.Entries, Bytes: ix.Bytes}
}

func (q *request) extListIndexes() error {
	if err := q.refuseKeyRange(); err != nil {
		return err // each index's entries and bytes are the whole table's
	}
	ixs, err := q.h.db.Table(q.res.table).Indexes(q.r.Context())
	if err != nil {
		return extError(err)
	}
	out := struct {
		Value []IndexJSON `json:"value"`
	}{Value: []IndexJSON{}}
	for _, ix := range ixs {
		out.Value = append(out.Value, indexJSON(ix))
	}
	return q.writeExtJSON(http.StatusOK, out)
}

func (q *request) findIndex() (tablestore.IndexInfo, error) {
	ixs, err := q.h.db.Table(q.res.table).Indexes(q.r.Context())
	if err != nil {
		return tablestore.IndexInfo{}, extError(err)
	}
	for _, ix := range ixs {
		if strings.EqualFold(ix.Name, q.res.index) {
			return ix, nil
		}
	}
	return tablestore.IndexInfo{}, apiError(http.StatusNotFound, edm.CodeResourceNotFound,
		"table "+strconv.Quote(q.res.table)+" has no index named "+strconv.Quote(q.res.index))
}

func (q *request) extGetIndex() error {
	if err := q.refuseKeyRange(); err != nil {
		return err
	}
	ix, err := q.findIndex()
	if err != nil {
		return err
	}
	return q.writeExtJSON(http.StatusOK, indexJSON(ix))
}

// extCreateIndex creates the index and answers once it is ready; while
// it builds, GET .../indexes shows its progress. A client that goes away
// ends the build, and the index is removed.
func (q *request) extCreateIndex() error {
	var in struct {
		Properties  []string `json:"properties"`
		Partitioned bool     `json:"partitioned"`
		Unique      bool     `json:"unique"`
	}
	if err := q.decodeExtBody(&in); err != nil {
		return err
	}
	t := q.h.db.Table(q.res.table)
	spec := tablestore.IndexSpec{Name: q.res.index, Properties: in.Properties, Partitioned: in.Partitioned, Unique: in.Unique}
	if err := t.CreateIndex(q.r.Context(), spec); err != nil {
		return extError(err)
	}
	ix, err := q.findIndex()
	if err != nil {
		return err
	}
	return q.writeExtJSON(http.StatusCreated, indexJSON(ix))
}

func (q *request) extDropIndex() error {
	if err := q.h.db.Table(q.res.table).DropIndex(q.r.Context(), q.res.index); err != nil {
		return extError(err)
	}
	q.w.WriteHeader(http.StatusNoContent)
	return nil
}

// ---- TTL ----

type ttlJSON struct {
	DefaultSeconds float64 `json:"defaultSeconds"`
	Property       string  `json:"property"`
}

func (q *request) extGetTTL() error {
	s, err := q.h.db.Table(q.res.table).TTL(q.r.Context())
	if err != nil {
		return extError(err)
	}
	return q.writeExtJSON(http.StatusOK, ttlJSON{DefaultSeconds: s.Default.Seconds(), Property: s.Property})
}

func (q *request) extSetTTL() error {
	var in ttlJSON
	if err := q.decodeExtBody(&in); err != nil {
		return err
	}
	if in.DefaultSeconds != 0 && (in.DefaultSeconds < 1 || in.DefaultSeconds > float64(tablestore.MaxTTLDefault/time.Second)) {
		return badBody("defaultSeconds must be 0 (no default) or a number of seconds from 1 to 3153600000 (100 years).")
	}
	s := tablestore.TTL{Default: time.Duration(in.DefaultSeconds * float64(time.Second)), Property: in.Property}
	t := q.h.db.Table(q.res.table)
	if err := t.SetTTL(q.r.Context(), s); err != nil {
		return extError(err)
	}
	return q.extGetTTL()
}

// ---- keyspace ----

// extDeleteRange deletes the RowKeys [from, to) of partition pk (both
// absent: the whole partition).
func (q *request) extDeleteRange() error {
	if err := q.refuseKeyRange(); err != nil {
		return err
	}
	v := q.res.query
	if !v.Has("pk") {
		return badParam("The query needs pk, the partition key (empty is allowed: pk=).")
	}
	p := q.h.db.Table(q.res.table).Partition(v.Get("pk"))
	if err := p.DeleteRange(q.r.Context(), v.Get("from"), v.Get("to")); err != nil {
		return extError(err)
	}
	q.w.WriteHeader(http.StatusNoContent)
	return nil
}

// ---- stats ----

// StatsJSON is a table's size estimate as the stats endpoint answers it.
type StatsJSON struct {
	Entities  int64 `json:"entities"`
	Bytes     int64 `json:"bytes"`
	Unflushed bool  `json:"unflushed"`
	// Expired counts expired entities not yet swept; -1 when unknown.
	Expired int64 `json:"expired"`
}

func (q *request) extStats() error {
	if err := q.refuseKeyRange(); err != nil {
		return err
	}
	t := q.h.db.Table(q.res.table)
	st, err := t.Stats(q.r.Context())
	if err != nil {
		return extError(err)
	}
	out := StatsJSON{Entities: st.Entities, Bytes: st.Bytes, Unflushed: st.Unflushed, Expired: -1}
	if n, err := t.ExpiredCount(q.r.Context()); err == nil {
		out.Expired = n
	}
	return q.writeExtJSON(http.StatusOK, out)
}
