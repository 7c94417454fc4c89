package tablestore

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestMarshalJSONValue checks that an Entity value, a pointer, and
// structs and slices holding either all encode in Azure's wire form.
func TestMarshalJSONValue(t *testing.T) {
	g, err := ParseGUID("c9da6455-213d-42c9-9a79-3e9149a57833")
	require.NoError(t, err)
	e := Entity{PartitionKey: "p", RowKey: "r",
		Properties: map[string]any{"G": g, "L": int64(7)}}
	const want = `{"PartitionKey":"p","RowKey":"r","G@odata.type":"Edm.Guid","G":"c9da6455-213d-42c9-9a79-3e9149a57833",` +
		`"L@odata.type":"Edm.Int64","L":"7"}`

	for name, v := range map[string]any{"value": e, "pointer": &e} {
		out, err := json.Marshal(v)
		require.NoError(t, err, name)
		require.Equal(t, want, string(out), name)
	}

	type wrapper struct {
		Item  Entity
		Ptr   *Entity
		Nil   *Entity
		Items []Entity
	}
	out, err := json.Marshal(wrapper{Item: e, Ptr: &e, Items: []Entity{e}})
	require.NoError(t, err)
	require.Equal(t, `{"Item":`+want+`,"Ptr":`+want+`,"Nil":null,"Items":[`+want+`]}`, string(out))

	// And back: a struct field of type Entity decodes Azure's form.
	var back wrapper
	require.NoError(t, json.Unmarshal(out, &back))
	require.Equal(t, e.Properties, back.Item.Properties)
	require.Equal(t, e.Properties, back.Items[0].Properties)
	require.Nil(t, back.Nil)
}

// TestUnmarshalJSONBigIntegers checks that a bare integer beyond Int32 is a
// Double when a double holds it exactly (Azure's inference) and an Int64
// when a double would round it.
func TestUnmarshalJSONBigIntegers(t *testing.T) {
	for raw, want := range map[string]any{
		"2147483647":           int32(2147483647),
		"2147483648":           float64(2147483648),
		"9007199254740992":     float64(1 << 53),
		"9007199254740993":     int64(1<<53 + 1),
		"-9007199254740993":    int64(-(1<<53 + 1)),
		"9223372036854775807":  int64(9223372036854775807),
		"9223372036854775808":  float64(9223372036854775808),
		"-9223372036854775808": float64(-9223372036854775808),
	} {
		var e Entity
		require.NoError(t, json.Unmarshal([]byte(`{"PartitionKey":"p","RowKey":"r","N":`+raw+`}`), &e), raw)
		require.Equal(t, want, e.Properties["N"], raw)
	}
}
