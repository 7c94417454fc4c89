package modeltest

import (
	"strings"

	ts "github.com/tablestore/tablestore"
)

// partitionOp runs one operation through a Partition view.
func (h *harness) partitionOp() {
	switch h.rng.Intn(10) {
	case 0, 1, 2:
		h.opPartitionWrite()
	case 3, 4, 5:
		h.opPartitionQuery()
	default:
		h.opPartitionWrite()
	}
}

// opPartitionWrite writes one entity through a Partition, leaving the
// entity's PartitionKey empty half the time.
func (h *harness) opPartitionWrite() {
	table, ok := h.writeTable()
	if !ok {
		return
	}
	e := h.randomEntity(table)
	p := h.table(table).Partition(e.PartitionKey)
	pe := copyEntity(e)
	if h.rng.Intn(2) == 0 {
		pe.PartitionKey = ""
	}
	mode := h.randomMode()
	switch h.rng.Intn(3) {
	case 0:
		h.begin("partition-insert", "%s %s", table, Describe(e))
		h.write(table, e, func(ee *ts.Entity) error {
			ee.PartitionKey = pe.PartitionKey
			return p.Insert(h.ctx, ee)
		}, func() (ts.ETag, error) { return h.m.Insert(table, e) })
	case 1:
		h.begin("partition-upsert", "%s %s %s", table, mode, Describe(e))
		h.write(table, e, func(ee *ts.Entity) error {
			ee.PartitionKey = pe.PartitionKey
			return p.Upsert(h.ctx, ee, mode)
		}, func() (ts.ETag, error) { return h.m.Upsert(table, e, mode) })
	default:
		id := entityID{strings.ToLower(table), e.PartitionKey, e.RowKey}
		engineETag, modelETag, kind := h.pickIfMatch(id)
		h.begin("partition-update", "%s %s %s if-match %s (%s)", table, mode, Describe(e), engineETag, kind)
		h.write(table, e, func(ee *ts.Entity) error {
			ee.PartitionKey = pe.PartitionKey
			return p.Update(h.ctx, ee, mode, engineETag)
		}, func() (ts.ETag, error) { return h.m.Update(table, e, mode, modelETag) })
	}
}

// opPartitionQuery reads a query through a Partition, by pages or by the
// iterator, and compares it with the model's matches in that partition.
func (h *harness) opPartitionQuery() {
	table := h.existingTable()
	if table == "" {
		table = h.tableName()
	}
	pk, _ := h.randomKey(table)
	q := ts.Query{Filter: h.queryFilter(), Top: []int{0, 1, 2, 3, 7}[h.rng.Intn(5)]}
	iterate := h.rng.Intn(3) == 0
	h.begin("partition-query", "%s pk %q filter %q top %d iterate %v", table, pk, q.Filter, q.Top, iterate)
	p := h.table(table).Partition(pk)
	want, wantErr := h.m.QueryPartition(table, pk, q)
	var got []*ts.Entity
	var gotErr error
	if iterate {
		for e, err := range p.Query(h.ctx, q) {
			if err != nil {
				gotErr = err
				break
			}
			got = append(got, e)
		}
	} else {
		got, gotErr = h.pages(q, p.QueryPage)
	}
	h.sameError(gotErr, wantErr, false)
	if wantErr != nil {
		return
	}
	h.sameEntities(table, got, want)
	h.outcomes["partition-query-rows"] += len(want)
}
