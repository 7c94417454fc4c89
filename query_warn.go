package tablestore

import (
	"context"

	"github.com/tablestore/tablestore/driver"
	"github.com/tablestore/tablestore/filter"
	"github.com/tablestore/tablestore/internal/entityenc"
	"github.com/tablestore/tablestore/internal/plan"
)

// PlanSampleSize is how many entities Plan reads, from the start of the
// plan's key ranges and without the filter, to find the property names
// and types that its Warnings are based on.
const PlanSampleSize = 100

// sampleWarnings fills qp.Warnings: the comparisons of pq's filter that
// can match none of the first PlanSampleSize entities of its key ranges,
// by their property names and types, nor the properties of the table's
// indexes (by name only).
func (t *Table) sampleWarnings(ctx context.Context, pq *preparedQuery, qp *QueryPlan) error {
	if pq.req.Filter == nil || len(pq.plan.Ranges) == 0 {
		return nil
	}
	var seen plan.Seen
	req := driver.QueryRequest{Ranges: pq.plan.Ranges, Top: PlanSampleSize}
	_, err := t.drv.QueryPage(ctx, &req, func(r driver.Row) error {
		it := r.Record.Iter()
		for it.Next() {
			seen.Add(string(it.Name()), it.Value().Type)
		}
		return nil
	})
	if err != nil {
		return mapError(err, false)
	}
	if d, err := t.indexer(); err == nil {
		if sts, err := d.Indexes(ctx); err == nil {
			for _, st := range sts {
				for _, p := range st.Properties {
					seen.AddName(p)
				}
			}
		}
	}
	qp.Warnings = plan.Warnings(pq.req.Filter, &seen)
	for _, w := range qp.Warnings {
		qp.text += "warning: " + w + "\n"
	}
	return nil
}

// FilterWarnings lists the comparisons of filterText that can match none
// of entities, by the names and types of their properties: a property
// compared with a literal of a type it never has there (`Amount gt '5'`
// where Amount is an Int32), or a name none of them has but some have in
// another case (`status eq 'new'` beside Status). Such filters are valid
// and match nothing, as on Azure; the warnings are advice. With no
// entities there is nothing to warn of. Errors: InvalidInput (or
// NotImplemented) for a filter Query would refuse.
func FilterWarnings(filterText string, entities []*Entity) ([]string, error) {
	f, err := filter.Compile(filterText, nil)
	if err != nil {
		return nil, filterError(err)
	}
	var seen plan.Seen
	for _, e := range entities {
		for name, v := range e.Properties {
			if v, _, err := entityenc.EncodeValue(name, v); err == nil {
				seen.Add(name, v.Type)
			}
		}
	}
	return plan.Warnings(f.Root, &seen), nil
}
