package server

import (
	"cmp"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"hash/fnv"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/tablestore/tablestore"
	"github.com/tablestore/tablestore/edm"
	"github.com/tablestore/tablestore/filter"
)

// Query Entities and Query Tables in the Cosmos flavor: results in
// insertion order, a seeded order or key order, paged by an opaque
// token that counts the results already given. Each page reads the
// whole result and orders it again, so pages stay consistent while the
// data does not change; the memory budget bounds the result.

// cosmosRoute swaps in the Cosmos flavor's query and table list.
func (q *request) cosmosRoute(o *opRoute) {
	c := q.h.cosmos
	if c.opt.Order == OrderSorted && c.opt.StorageContinuation {
		return
	}
	switch {
	case q.res.kind == kindEntities && o.op == opRead:
		o.run = (*request).cosmosQueryEntities
	case q.res.kind == kindTables && o.op == opListTables:
		o.run = (*request).cosmosListTables
	}
}

// cosmosPage is the slice [from, to) of n results a page gives, and
// whether it carries a continuation: on every full page (the last one
// too, so an empty page follows), or with StorageContinuation only when
// more follow.
func (q *request) cosmosPage(n, from, top int, given bool) (to int, more bool) {
	if given && top == 0 {
		return from, false
	}
	if top == 0 {
		top = 1000
	}
	from = min(from, n)
	to = min(from+top, n)
	if q.h.cosmos.opt.StorageContinuation {
		return to, to < n
	}
	return to, to-from == top
}

// rank orders results by c's order; keys are each result's, rank the
// insertion numbers' or the seeded hashes' keys.
func (c *cosmosState) rank(table string, keys [][2]string, raw [][]byte, entity bool) []uint64 {
	r := make([]uint64, len(keys))
	for i, k := range keys {
		switch c.opt.Order {
		case OrderInsertion:
			if entity {
				r[i] = c.order(seqKey(table, k[0], k[1], true))
			} else {
				r[i] = c.order(seqKey(k[0], "", "", false))
			}
		case OrderSeeded:
			h := fnv.New64a()
			var seed [8]byte
			binary.LittleEndian.PutUint64(seed[:], c.opt.Seed)
			h.Write(seed[:])
			h.Write([]byte(k[0] + "\x00" + k[1]))
			if k == ([2]string{}) && raw != nil {
				h.Write(raw[i]) // a $select without the keys
			}
			r[i] = h.Sum64()
		}
	}
	return r
}

// sortByRank sorts idx by rank, stably (results of one rank keep key
// order).
func sortByRank(idx []int, rank []uint64) {
	slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(rank[a], rank[b]) })
}

var errCosmosToken = apiError(http.StatusBadRequest, edm.CodeInvalidInput, "One of the request inputs is not valid: the continuation token is malformed.")

// cosmosQueryEntities serves Query Entities in the Cosmos flavor.
func (q *request) cosmosQueryEntities() error {
	l, err := q.metadataLevel()
	if err != nil {
		return err
	}
	top, given, err := parseTop(q)
	if err != nil {
		return err
	}
	flt, err := q.restrictFilter(q.res.query.Get("$filter"))
	if err != nil {
		return err
	}
	from, err := parseEntityToken(q.res.query.Get("NextPartitionKey"))
	if err != nil {
		return err
	}
	sel := selectList(q)
	var all []json.RawMessage
	var meta json.RawMessage
	total := 0
	cont := ""
	for {
		b, next, err := q.queryPage(l, tablestore.Query{Filter: flt, Select: sel, Continuation: cont}, false)
		if err != nil {
			return err
		}
		var page struct {
			Meta  json.RawMessage   `json:"odata.metadata"`
			Value []json.RawMessage `json:"value"`
		}
		err = json.Unmarshal(b, &page)
		responseBuffers.put(b)
		if err != nil {
			return err
		}
		meta = page.Meta
		all = append(all, page.Value...)
		total += len(b)
		if next == nil {
			break
		}
		if !q.needMemory(int64(2 * total)) {
			return q.busy()
		}
		if cont, err = continuationFromQuery(encodeNextKey(next[0]), encodeNextKey(next[1])); err != nil {
			return err
		}
	}
	keys := make([][2]string, len(all))
	raws := make([][]byte, len(all))
	for i, e := range all {
		var k struct{ PartitionKey, RowKey string }
		_ = json.Unmarshal(e, &k) // a $select may leave them out
		keys[i] = [2]string{k.PartitionKey, k.RowKey}
		raws[i] = e
	}
	idx := make([]int, len(all))
	for i := range idx {
		idx[i] = i
	}
	if q.h.cosmos.opt.Order != OrderSorted {
		sortByRank(idx, q.h.cosmos.rank(q.res.table, keys, raws, true))
	}
	to, more := q.cosmosPage(len(all), from, top, given)
	from = min(from, len(all))
	q.cq.items, q.cq.counted = to-from, true
	b := []byte(`{"value":[`)
	for i, j := range idx[from:to] {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, all[j]...)
	}
	b = append(b, ']')
	if len(meta) > 0 {
		b = append(b, `,"odata.metadata":`...)
		b = append(b, meta...)
	}
	b = append(b, '}')
	if more {
		hd := q.w.Header()
		setExact(hd, "x-ms-continuation-NextPartitionKey", entityToken(to))
		setExact(hd, "x-ms-continuation-NextRowKey", "NA")
	}
	q.writeJSON(http.StatusOK, l, b)
	return nil
}

// entityToken is the continuation of Query Entities after n results,
// in the shape Cosmos DB gives it: a JSON document in NextPartitionKey
// (and NA in NextRowKey).
func entityToken(n int) string {
	tok := base64.StdEncoding.EncodeToString([]byte("ts:" + strconv.Itoa(n)))
	return `{"token":"` + tok + `","range":{"min":"","max":"FF"}}`
}

// parseEntityToken reads entityToken's count; 0 for none. Errors:
// InvalidInput.
func parseEntityToken(s string) (int, error) {
	if s == "" {
		return 0, nil
	}
	var t struct{ Token string }
	if json.Unmarshal([]byte(s), &t) != nil {
		return 0, errCosmosToken
	}
	raw, err := base64.StdEncoding.DecodeString(t.Token)
	if err != nil || !strings.HasPrefix(string(raw), "ts:") {
		return 0, errCosmosToken
	}
	n, err := strconv.Atoi(string(raw[3:]))
	if err != nil || n < 0 {
		return 0, errCosmosToken
	}
	return n, nil
}

// cosmosListTables serves Query Tables in the Cosmos flavor.
func (q *request) cosmosListTables() error {
	l, err := q.metadataLevel()
	if err != nil {
		return err
	}
	f, err := filter.Compile(q.res.query.Get("$filter"), nil)
	if err != nil {
		return filterAPIError(err)
	}
	top, given, err := parseTop(q)
	if err != nil {
		return err
	}
	from, page, err := parseTableToken(q.res.query.Get("NextTableName"))
	if err != nil {
		return err
	}
	var names []string
	for n, err := range q.h.db.TableNames(q.r.Context(), "") {
		if err != nil {
			return err
		}
		if f.Root == nil || f.Match(tableName(n)) {
			names = append(names, n)
		}
	}
	keys := make([][2]string, len(names))
	for i, n := range names {
		keys[i] = [2]string{n, ""}
	}
	idx := make([]int, len(names))
	for i := range idx {
		idx[i] = i
	}
	if q.h.cosmos.opt.Order != OrderSorted {
		sortByRank(idx, q.h.cosmos.rank("", keys, nil, false))
	}
	to, more := q.cosmosPage(len(names), from, top, given)
	from = min(from, len(names))
	q.cq.items, q.cq.counted = to-from, true
	b := []byte(`{"value":[`)
	for i, j := range idx[from:to] {
		if i > 0 {
			b = append(b, ',')
		}
		b = q.appendTable(b, l, names[j])
	}
	b = append(b, ']')
	if l != tablestore.NoMetadata {
		b = append(b, `,"odata.metadata":`...)
		b = appendString(b, q.res.base+"$metadata#Tables")
	}
	b = append(b, '}')
	if more {
		setExact(q.w.Header(), "x-ms-continuation-NextTableName", tableToken(page+1, to))
	}
	q.writeJSON(http.StatusOK, l, b)
	return nil
}

// tableToken is Query Tables' continuation after page pages and n
// names, in Cosmos DB's shape: -RID:~<id>#RT:<page>#TRC:<n>.
func tableToken(page, n int) string {
	var id [8]byte
	binary.LittleEndian.PutUint64(id[:], uint64(n)*0x9e3779b97f4a7c15)
	return "-RID:~" + base64.StdEncoding.EncodeToString(id[:]) + "#RT:" + strconv.Itoa(page) + "#TRC:" + strconv.Itoa(n)
}

// parseTableToken reads tableToken's page and count; zeros for none.
// Errors: InvalidInput.
func parseTableToken(s string) (n, page int, err error) {
	if s == "" {
		return 0, 0, nil
	}
	_, rest, ok := strings.Cut(s, "#RT:")
	rt, trc, ok2 := strings.Cut(rest, "#TRC:")
	if !ok || !ok2 || !strings.HasPrefix(s, "-RID:~") {
		return 0, 0, errCosmosToken
	}
	page, err1 := strconv.Atoi(rt)
	n, err2 := strconv.Atoi(trc)
	if err1 != nil || err2 != nil || n < 0 || page < 0 {
		return 0, 0, errCosmosToken
	}
	return n, page, nil
}
