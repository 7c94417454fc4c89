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
)

// Query Entities and Query Tables in the Cosmos flavor: results in
// insertion order, a seeded order or key order, paged by an opaque
// token holding the position of a page's last result (cosmosPos). Each
// page reads the whole result, orders it again and resumes after that
// position; the memory budget bounds the result.

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

// cosmosPage is the slice [from, to) of n ordered results a page
// gives, and whether it carries a continuation: on every full page (the
// last one too, so an empty page follows), or with StorageContinuation
// only when more follow.
func (q *request) cosmosPage(n, from, top int, given bool) (to int, more bool) {
	if given && top == 0 {
		return from, false
	}
	if top == 0 {
		top = 1000
	}
	to = min(from+top, n)
	if q.h.cosmos.opt.StorageContinuation {
		return to, to < n
	}
	return to, to-from == top
}

// cosmosOrder orders results whose keys are keys (entities: PartitionKey
// and RowKey; tables: the name first) and which came in key order. It
// returns their indexes in the order given and each one's rank: results
// go by rank, then key order.
func (c *cosmosState) cosmosOrder(table string, keys [][2]string, raw [][]byte, entity bool) (idx []int, rank []uint64) {
	rank = make([]uint64, len(keys))
	for i, k := range keys {
		switch c.opt.Order {
		case OrderInsertion:
			if entity {
				rank[i] = c.order(seqKey(table, k[0], k[1], true))
			} else {
				rank[i] = c.order(seqKey(k[0], "", "", false))
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
			rank[i] = h.Sum64()
		}
	}
	idx = make([]int, len(keys))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(rank[a], rank[b]) })
	return idx, rank
}

// cosmosPos is where a page ended: the rank and keys of its last result
// and how many results came before and in it. Tokens carry it, so a page
// resumes after that result even when writes came in between.
type cosmosPos struct {
	Rank uint64    `json:"r"`
	Keys [2]string `json:"k"`
	N    int       `json:"n"`
}

// resume is the index in the order (idx, rank) of the first result
// after p; keyCmp compares keys in the order results came in.
func resume(idx []int, rank []uint64, keys [][2]string, p *cosmosPos, keyCmp func(a, b [2]string) int) int {
	if p == nil {
		return 0
	}
	i, _ := slices.BinarySearchFunc(idx, p, func(j int, p *cosmosPos) int {
		if c := cmp.Compare(rank[j], p.Rank); c != 0 {
			return c
		}
		if keyCmp(keys[j], p.Keys) <= 0 {
			return -1
		}
		return 1
	})
	return i
}

func encodePos(p cosmosPos) string {
	b, _ := json.Marshal(p)
	return base64.StdEncoding.EncodeToString(b)
}

// decodePos reads encodePos's token. Errors: InvalidInput.
func decodePos(s string) (*cosmosPos, error) {
	b, err := base64.StdEncoding.DecodeString(s)
	var p cosmosPos
	if err != nil || json.Unmarshal(b, &p) != nil || p.N < 0 {
		return nil, errCosmosToken
	}
	return &p, nil
}

// entityKeyCmp is the store's order of entities: PartitionKey, then
// RowKey.
func entityKeyCmp(a, b [2]string) int {
	if c := strings.Compare(a[0], b[0]); c != 0 {
		return c
	}
	return strings.Compare(a[1], b[1])
}

// tableKeyCmp is the store's order of table names: case-insensitive,
// then exact.
func tableKeyCmp(a, b [2]string) int {
	if c := strings.Compare(strings.ToLower(a[0]), strings.ToLower(b[0])); c != 0 {
		return c
	}
	return strings.Compare(a[0], b[0])
}

var errCosmosToken = apiError(http.StatusBadRequest, edm.CodeInvalidInput, "One of the request inputs is not valid: the continuation token is malformed.")

// cosmosQueryEntities serves Query Entities in the Cosmos flavor.
func (q *request) cosmosQueryEntities() error {
	l, top, given, flt, err := q.entityQueryArgs()
	if err != nil {
		return err
	}
	pos, err := parseEntityToken(q.res.query.Get("NextPartitionKey"))
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
	idx, rank := q.h.cosmos.cosmosOrder(q.res.table, keys, raws, true)
	from := resume(idx, rank, keys, pos, entityKeyCmp)
	to, more := q.cosmosPage(len(all), from, top, given)
	q.cq.items, q.cq.counted = to-from, true
	b := []byte(`{"value":[`)
	c := q.h.cosmos
	for i, j := range idx[from:to] {
		if i > 0 {
			b = append(b, ',')
		}
		e := all[j]
		if !c.opt.StoragePropertyOrder && keys[j] != ([2]string{}) {
			e = reorderEntity(e, c.propsOf(seqKey(q.res.table, keys[j][0], keys[j][1], true)))
		}
		b = append(b, e...)
	}
	b = append(b, ']')
	if len(meta) > 0 {
		b = append(b, `,"odata.metadata":`...)
		b = append(b, meta...)
	}
	b = append(b, '}')
	if more {
		hd := q.w.Header()
		last := idx[to-1]
		setExact(hd, "x-ms-continuation-NextPartitionKey", entityToken(cosmosPos{Rank: rank[last], Keys: keys[last], N: given0(pos) + to - from}))
		setExact(hd, "x-ms-continuation-NextRowKey", "NA")
	}
	q.writeJSON(http.StatusOK, l, b)
	return nil
}

// entityToken is the continuation of Query Entities after p, in the
// shape Cosmos DB gives it: a JSON document in NextPartitionKey (and NA
// in NextRowKey).
func entityToken(p cosmosPos) string {
	return `{"token":"` + encodePos(p) + `","range":{"min":"","max":"FF"}}`
}

// parseEntityToken reads entityToken's position; nil for none. Errors:
// InvalidInput.
func parseEntityToken(s string) (*cosmosPos, error) {
	if s == "" {
		return nil, nil
	}
	var t struct{ Token string }
	if json.Unmarshal([]byte(s), &t) != nil {
		return nil, errCosmosToken
	}
	return decodePos(t.Token)
}

// given0 is how many results came before pos; 0 for none.
func given0(p *cosmosPos) int {
	if p == nil {
		return 0
	}
	return p.N
}

// cosmosListTables serves Query Tables in the Cosmos flavor.
func (q *request) cosmosListTables() error {
	l, f, top, given, err := q.tableQueryArgs()
	if err != nil {
		return err
	}
	pos, page, err := parseTableToken(q.res.query.Get("NextTableName"))
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
	idx, rank := q.h.cosmos.cosmosOrder("", keys, nil, false)
	from := resume(idx, rank, keys, pos, tableKeyCmp)
	to, more := q.cosmosPage(len(names), from, top, given)
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
		last := idx[to-1]
		setExact(q.w.Header(), "x-ms-continuation-NextTableName",
			tableToken(page+1, cosmosPos{Rank: rank[last], Keys: keys[last], N: given0(pos) + to - from}))
	}
	q.writeJSON(http.StatusOK, l, b)
	return nil
}

// tableToken is Query Tables' continuation after page pages ending at
// p, in Cosmos DB's shape: -RID:~<position>#RT:<page>#TRC:<count>.
func tableToken(page int, p cosmosPos) string {
	return "-RID:~" + encodePos(p) + "#RT:" + strconv.Itoa(page) + "#TRC:" + strconv.Itoa(p.N)
}

// parseTableToken reads tableToken's position and page; nil and 0 for
// none. Errors: InvalidInput.
func parseTableToken(s string) (*cosmosPos, int, error) {
	if s == "" {
		return nil, 0, nil
	}
	rid, rest, ok := strings.Cut(strings.TrimPrefix(s, "-RID:~"), "#RT:")
	rt, _, ok2 := strings.Cut(rest, "#TRC:")
	page, err := strconv.Atoi(rt)
	if !ok || !ok2 || !strings.HasPrefix(s, "-RID:~") || err != nil || page < 0 {
		return nil, 0, errCosmosToken
	}
	p, err := decodePos(rid)
	return p, page, err
}
