package model

import (
	"bytes"
	"cmp"
	"errors"
	"math"
	"slices"
	"strings"

	ts "github.com/tablestore/tablestore"
	"github.com/tablestore/tablestore/edm"
	"github.com/tablestore/tablestore/filter"
)

// maxIndexes is the most indexes a table has.
const maxIndexes = 16

// CreateIndex declares an index (see Table.CreateIndex). The model keeps
// only its spec: a query through it sorts the matches in index order.
// Unique indexes are not modelled.
func (m *Model) CreateIndex(tableName string, spec ts.IndexSpec) error {
	if err := checkIndexSpec(spec); err != nil {
		return err
	}
	t, err := m.table(tableName)
	if err != nil {
		return err
	}
	if len(t.indexes) >= maxIndexes || t.index(spec.Name) >= 0 {
		return fail(edm.CodeInvalidInput)
	}
	spec.Properties = slices.Clone(spec.Properties)
	t.indexes = append(t.indexes, spec)
	return nil
}

func checkIndexSpec(spec ts.IndexSpec) error {
	name := spec.Name
	if name == "" || len(name) > 63 {
		return fail(edm.CodeInvalidInput)
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		letter := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
		if !letter && (i == 0 || !(c >= '0' && c <= '9' || c == '_')) {
			return fail(edm.CodeInvalidInput)
		}
	}
	if n := len(spec.Properties); n == 0 || n > ts.MaxIndexProperties {
		return fail(edm.CodeInvalidInput)
	}
	for i, p := range spec.Properties {
		switch p {
		case "PartitionKey", "RowKey", "Timestamp":
			return fail(edm.CodeInvalidInput)
		}
		if err := checkPropertyName(p); err != nil {
			return err
		}
		if slices.Contains(spec.Properties[:i], p) {
			return fail(edm.CodeInvalidInput)
		}
	}
	return nil
}

// index returns the position of the index named name (case-insensitively),
// or -1.
func (t *table) index(name string) int {
	return slices.IndexFunc(t.indexes, func(s ts.IndexSpec) bool { return strings.EqualFold(s.Name, name) })
}

// DropIndex removes an index. Errors: TableNotFound, ResourceNotFound.
func (m *Model) DropIndex(tableName, name string) error {
	t, err := m.table(tableName)
	if err != nil {
		return err
	}
	i := t.index(name)
	if i < 0 {
		return fail(edm.CodeResourceNotFound)
	}
	t.indexes = slices.Delete(t.indexes, i, i+1)
	return nil
}

// Indexes returns the specs of a table's indexes sorted by name
// case-insensitively.
func (m *Model) Indexes(tableName string) ([]ts.IndexSpec, error) {
	t, err := m.table(tableName)
	if err != nil {
		return nil, err
	}
	out := slices.Clone(t.indexes)
	slices.SortFunc(out, func(a, b ts.IndexSpec) int { return strings.Compare(strings.ToLower(a.Name), strings.ToLower(b.Name)) })
	return out, nil
}

// QueryIndex returns the matches of q through the index q.Index, in the
// index's order: by the indexed values property by property (the EDM
// type first, an absent property before every value), then PartitionKey
// and RowKey; a Partitioned index by PartitionKey first. Errors: those of
// Query, InvalidInput for Reverse, ResourceNotFound for no such index.
func (m *Model) QueryIndex(tableName string, q ts.Query) ([]*ts.Entity, error) {
	if q.Top < 0 || q.Top > 1000 {
		return nil, fail(edm.CodeInvalidInput)
	}
	if _, err := filter.Compile(q.Filter, &filter.DefaultLimits); err != nil {
		var fe *filter.Error
		if errors.As(err, &fe) {
			return nil, fail(fe.Code)
		}
		return nil, fail(edm.CodeInvalidInput)
	}
	if q.Reverse {
		return nil, fail(edm.CodeInvalidInput)
	}
	t, err := m.table(tableName)
	if err != nil {
		return nil, err
	}
	i := t.index(q.Index)
	if i < 0 {
		return nil, fail(edm.CodeResourceNotFound)
	}
	spec := t.indexes[i]
	sel := q.Select
	q.Select, q.Index = nil, ""
	all, err := m.Query(tableName, q)
	if err != nil {
		return nil, err
	}
	slices.SortStableFunc(all, func(a, b *ts.Entity) int {
		if spec.Partitioned {
			if c := strings.Compare(a.PartitionKey, b.PartitionKey); c != 0 {
				return c
			}
		}
		for _, p := range spec.Properties {
			if c := compareIndexed(a.Properties[p], b.Properties[p]); c != 0 {
				return c
			}
		}
		return cmp.Or(strings.Compare(a.PartitionKey, b.PartitionKey), strings.Compare(a.RowKey, b.RowKey))
	})
	for j, e := range all {
		all[j] = project(e, sel)
	}
	return all, nil
}

// compareIndexed orders two values of an indexed property as an index
// does: absent (nil) first, then by EDM type (String, Int32, Int64,
// Double, Boolean, DateTime, Guid, Binary), then by value as filters
// compare one type (a Double's NaN first and -0 equal to 0).
func compareIndexed(a, b any) int {
	va, oka := ToValue(a)
	vb, okb := ToValue(b)
	switch {
	case !oka || !okb:
		return cmp.Compare(boolInt(oka), boolInt(okb))
	case va.Type != vb.Type:
		return cmp.Compare(va.Type, vb.Type)
	}
	switch va.Type {
	case edm.TypeString, edm.TypeBinary, edm.TypeGuid:
		return bytes.Compare(va.Bytes, vb.Bytes)
	case edm.TypeDouble:
		na, nb := math.IsNaN(va.Float), math.IsNaN(vb.Float)
		if na || nb {
			return cmp.Compare(boolInt(!na), boolInt(!nb))
		}
		return cmp.Compare(va.Float, vb.Float)
	}
	return cmp.Compare(va.Int, vb.Int)
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
