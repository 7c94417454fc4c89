package modeltest

import (
	"strings"

	ts "github.com/tablestore/tablestore"
)

// partitionOp runs one operation through a Partition view.
func (h *harness) partitionOp() {
	r := h.rng.Intn(12)
	if h.cfg.Quirks.NoKeyspaceOps && r >= 6 {
		r %= 6 // no segments, no partition deletes
	}
	switch r {
	case 10, 11:
		h.opSegments()
	case 0, 1, 2:
		h.opPartitionWrite()
	case 3, 4, 5:
		h.opPartitionQuery()
	default:
		h.opPartitionDelete()
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
	q := ts.Query{Filter: h.queryFilter(), Top: []int{0, 1, 2, 3, 7}[h.rng.Intn(5)], Reverse: h.rng.Intn(3) == 0 && !h.cfg.Quirks.NoKeyspaceOps}
	iterate := h.rng.Intn(3) == 0
	h.begin("partition-query", "%s pk %q filter %q top %d iterate %v reverse %v", table, pk, q.Filter, q.Top, iterate, q.Reverse)
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

// opPartitionDelete deletes a partition, or a RowKey range of one, on both
// sides, and then compares every entity of the partition.
func (h *harness) opPartitionDelete() {
	table, ok := h.writeTable()
	if !ok {
		return
	}
	pk, _ := h.randomKey(table)
	var from, to string
	switch h.rng.Intn(4) {
	case 0: // the whole partition
	case 1:
		from = h.pick(rkPool)
	case 2:
		to = h.pick(rkPool)
	default:
		from, to = h.pick(rkPool), h.pick(rkPool)
	}
	if h.rng.Intn(30) == 0 {
		from = h.pick([]string{"a/b", "x#", "\u0080"})
	}
	h.begin("partition-delete", "%s pk %q [%q, %q)", table, pk, from, to)
	p := h.table(table).Partition(pk)
	var gotErr error
	if from == "" && to == "" && h.rng.Intn(2) == 0 {
		gotErr = p.DeleteAll(h.ctx)
	} else {
		gotErr = p.DeleteRange(h.ctx, from, to)
	}
	wantErr := h.m.DeleteRange(table, pk, from, to)
	h.sameError(gotErr, wantErr, false)
	if wantErr != nil {
		return
	}
	for id := range h.vers {
		if id.table == strings.ToLower(table) && id.pk == pk && id.rk >= from && (to == "" || id.rk < to) {
			h.forget(id)
		}
	}
	got, err := h.pages(ts.Query{}, p.QueryPage)
	if err != nil {
		h.failf("partition scan after delete: %v", err)
	}
	want, _ := h.m.QueryPartition(table, pk, ts.Query{})
	h.sameEntities(table, got, want)
}
