package filter

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tablestore/tablestore/edm"
)

func compile(t *testing.T, src string) Node {
	t.Helper()
	f, err := Compile(src, nil)
	require.NoError(t, err)
	return f.Root
}

// TestWarnings covers both warnings, their absence for comparable types,
// unseen names, system properties and names known only from an index, and
// that each is listed once.
func TestWarnings(t *testing.T) {
	var s Seen
	s.Add("Amount", edm.TypeInt32)
	s.Add("Status", edm.TypeString)
	s.Add("Price", edm.TypeDouble)
	s.Add("Big", edm.TypeInt64)
	s.Add("Mixed", edm.TypeInt32)
	s.Add("Mixed", edm.TypeString)
	s.AddName("Indexed")
	for _, tc := range []struct {
		filter string
		want   []string
	}{
		{"Amount gt '5'", []string{"Amount is compared (gt) with a literal of type Edm.String but was seen only as Edm.Int32: such a comparison matches nothing"}},
		{"status eq 'new'", []string{"property status was never seen, but Status was: names are case-sensitive, so status eq ... matches nothing"}},
		{"Amount gt 5 and Status eq 'new'", nil},
		{"Amount gt 5L", []string{"Amount is compared (gt) with a literal of type Edm.Int64 but was seen only as Edm.Int32: such a comparison matches nothing"}},
		{"Big gt 5 and Price lt 3 and Price gt 2L", nil},
		{"Mixed eq 'x' or Mixed eq 3", nil},
		{"Nowhere eq 1 and PartitionKey eq 'p' and RowKey gt 'a'", nil},
		{"Indexed eq true and indexed eq 1", []string{"property indexed was never seen, but Indexed was: names are case-sensitive, so indexed eq ... matches nothing"}},
		{"not (Amount eq 'a') or (Amount eq 'a' and Amount ne 'b')", []string{
			"Amount is compared (eq) with a literal of type Edm.String but was seen only as Edm.Int32: such a comparison matches nothing",
			"Amount is compared (ne) with a literal of type Edm.String but was seen only as Edm.Int32: such a comparison holds for every entity that has it"}},
	} {
		require.Equal(t, tc.want, Warnings(compile(t, tc.filter), &s), tc.filter)
	}
	require.Nil(t, Warnings(compile(t, "Amount gt '5'"), &Seen{}), "nothing seen, nothing to warn of")
}

// oneProp is one property, for Eval.
type oneProp struct {
	name string
	v    edm.Value
}

func (p oneProp) Lookup(name string) (edm.Value, bool) { return p.v, name == p.name }

// TestComparableMatchesEval checks comparableTypes against the evaluator: for
// each property type a value equal to each literal where the types
// compare, so `P eq literal` holds exactly when comparableTypes says they do.
func TestComparableMatchesEval(t *testing.T) {
	lits := map[edm.Type]string{
		edm.TypeString: "'a'", edm.TypeInt32: "1", edm.TypeInt64: "1L", edm.TypeDouble: "1.0",
		edm.TypeBoolean: "true", edm.TypeDateTime: "datetime'2020-01-01T00:00:00Z'",
		edm.TypeGuid: "guid'00000000-0000-0000-0000-000000000001'", edm.TypeBinary: "X'01'",
	}
	guid := make([]byte, 16)
	guid[15] = 1
	vals := map[edm.Type]edm.Value{
		edm.TypeString: {Type: edm.TypeString, Bytes: []byte("a")}, edm.TypeInt32: {Type: edm.TypeInt32, Int: 1},
		edm.TypeInt64: {Type: edm.TypeInt64, Int: 1}, edm.TypeDouble: {Type: edm.TypeDouble, Float: 1},
		edm.TypeBoolean:  {Type: edm.TypeBoolean, Int: 1},
		edm.TypeDateTime: {Type: edm.TypeDateTime, Int: edm.TicksFromTime(time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC))},
		edm.TypeGuid:     {Type: edm.TypeGuid, Bytes: guid}, edm.TypeBinary: {Type: edm.TypeBinary, Bytes: []byte{1}},
	}
	for pt, v := range vals {
		for lt, lit := range lits {
			eq := Eval(compile(t, "P eq "+lit), oneProp{"P", v})
			require.Equal(t, comparableTypes(pt, lt), eq, "%s property, %s literal", pt, lt)
		}
	}
}

// TestSeenAddValue: values are typed as Literal types them, so the
// warnings of entities a caller read match those of their stored types,
// and a value Literal refuses records nothing.
func TestSeenAddValue(t *testing.T) {
	var s Seen
	s.AddValue("Amount", int32(1))
	s.AddValue("Status", "x")
	s.AddValue("Odd", 7) // an int has no literal
	require.Equal(t, []string{
		"Amount is compared (eq) with a literal of type Edm.Int64 but was seen only as Edm.Int32: such a comparison matches nothing",
		"property status was never seen, but Status was: names are case-sensitive, so status eq ... matches nothing",
	}, Warnings(compile(t, "Amount eq 1L or status eq 'x' or Odd eq 1L"), &s))
	require.Empty(t, Warnings(compile(t, "Amount eq 1"), &s))
}
