package compat

import (
	"bytes"
	"fmt"
	"math"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
)

func TestServerEDMRoundTrip(t *testing.T) {
	_, svc := newService(t)
	c := newTable(t, svc)
	when := time.Date(2013, 8, 2, 17, 37, 43, 900434800, time.UTC)
	in := aztables.EDMEntity{
		Entity: aztables.Entity{PartitionKey: "edm", RowKey: "1"},
		Properties: map[string]any{
			"Str":    "hello \"world\" \u00e9\u4f60\u597d",
			"I32":    int32(-42),
			"I64":    aztables.EDMInt64(math.MaxInt64),
			"Dbl":    3.25,
			"Whole":  2.0, // Go writes 2, which Azure stores as Int32
			"Bool":   true,
			"When":   aztables.EDMDateTime(when),
			"Guid":   aztables.EDMGUID("a455c695-df98-5678-aaaa-81d3367e5a34"),
			"Bin":    aztables.EDMBinary([]byte{0, 1, 2, 250}),
			"Empty":  "",
			"BigInt": 3000000000, // too big for Int32 without annotation: Double
		},
	}
	raw, err := in.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.AddEntity(ctx(t), raw, nil); err != nil {
		t.Fatalf("add: %v", err)
	}
	for _, f := range []aztables.MetadataFormat{aztables.MetadataFormatMinimal, aztables.MetadataFormatFull} {
		got, err := c.GetEntity(ctx(t), "edm", "1", &aztables.GetEntityOptions{Format: to.Ptr(f)})
		if err != nil {
			t.Fatal(err)
		}
		var out aztables.EDMEntity
		if err := out.UnmarshalJSON(got.Value); err != nil {
			t.Fatalf("decode %s: %v", got.Value, err)
		}
		p := out.Properties
		check := func(name string, ok bool) {
			if !ok {
				t.Errorf("%s: %s = %#v (%T)", f, name, p[name], p[name])
			}
		}
		check("Str", p["Str"] == in.Properties["Str"])
		check("I32", p["I32"] == int32(-42))
		check("I64", p["I64"] == aztables.EDMInt64(math.MaxInt64))
		check("Dbl", p["Dbl"] == 3.25)
		check("Whole", p["Whole"] == int32(2))
		check("Bool", p["Bool"] == true)
		check("When", time.Time(p["When"].(aztables.EDMDateTime)).Equal(when))
		check("Guid", p["Guid"] == aztables.EDMGUID("a455c695-df98-5678-aaaa-81d3367e5a34"))
		b, _ := p["Bin"].(aztables.EDMBinary)
		check("Bin", bytes.Equal(b, []byte{0, 1, 2, 250}))
		check("Empty", p["Empty"] == "")
		check("BigInt", p["BigInt"] == float64(3000000000))
		if time.Since(time.Time(out.Timestamp)) > time.Minute {
			t.Errorf("timestamp %v", out.Timestamp)
		}
	}
	// Special doubles need the annotation and round-trip.
	special := []byte(`{"PartitionKey":"edm","RowKey":"2","N@odata.type":"Edm.Double","N":"NaN","I@odata.type":"Edm.Double","I":"-Infinity"}`)
	if _, err := c.AddEntity(ctx(t), special, nil); err != nil {
		t.Fatalf("special doubles: %v", err)
	}
	got, err := c.GetEntity(ctx(t), "edm", "2", nil)
	if err != nil || !bytes.Contains(got.Value, []byte(`"N":"NaN"`)) || !bytes.Contains(got.Value, []byte(`"I":"-Infinity"`)) {
		t.Fatalf("special doubles: %s %v", got.Value, err)
	}
}

func TestServerKeyEdgeCases(t *testing.T) {
	_, svc := newService(t)
	c := newTable(t, svc)
	keys := []struct{ pk, rk string }{
		{"O'Connor", "it's"},
		{"a''b", "'"},
		{"space here", "RK'@*$!%"},
		{"你好", "é🙂"},
		{"(paren)", "a,b=c"},
		{"plus+sign", "amp&semi;"},
	}
	for _, k := range keys {
		e := map[string]any{"PartitionKey": k.pk, "RowKey": k.rk, "V": k.pk + "|" + k.rk}
		if _, err := c.AddEntity(ctx(t), mustJSON(t, e), nil); err != nil {
			t.Fatalf("add %q/%q: %v", k.pk, k.rk, err)
		}
	}
	for _, k := range keys {
		// The Go SDK doubles quotes in the JSON body's keys (its bug), so
		// address entities by URL only: GetEntity, merge and delete.
		got, err := c.GetEntity(ctx(t), k.pk, k.rk, nil)
		if err != nil {
			t.Fatalf("get %q/%q: %v", k.pk, k.rk, err)
		}
		var out aztables.EDMEntity
		_ = out.UnmarshalJSON(got.Value)
		if out.Properties["V"] != k.pk+"|"+k.rk {
			t.Fatalf("get %q/%q: %s", k.pk, k.rk, got.Value)
		}
		if _, err := c.UpsertEntity(ctx(t), mustJSON(t, map[string]any{"PartitionKey": k.pk, "RowKey": k.rk, "W": 1}), nil); err != nil {
			t.Fatalf("upsert %q/%q: %v", k.pk, k.rk, err)
		}
	}
	// Filters on keys with quotes, and paging across them with $top=1.
	ents, pages := listAll(t, c, &aztables.ListEntitiesOptions{Top: to.Ptr[int32](1)})
	if len(ents) != len(keys) || pages < len(keys) {
		t.Fatalf("paged %d entities in %d pages", len(ents), pages)
	}
	for _, e := range ents {
		if e.Properties["W"] != int32(1) {
			t.Fatalf("upsert merge lost: %+v", e)
		}
	}
	f := fmt.Sprintf("PartitionKey eq '%s'", strings.ReplaceAll("O'Connor", "'", "''"))
	ents, _ = listAll(t, c, &aztables.ListEntitiesOptions{Filter: &f})
	if len(ents) != 1 || ents[0].RowKey != "it's" {
		t.Fatalf("filter on quoted key: %+v", ents)
	}
	for _, k := range keys {
		if _, err := c.DeleteEntity(ctx(t), k.pk, k.rk, nil); err != nil {
			t.Fatalf("delete %q/%q: %v", k.pk, k.rk, err)
		}
	}
	// Bad keys and properties get Azure's 400 codes. (The SDK itself
	// refuses malformed JSON and a missing key; the server's own answers
	// to those are in server/testdata.)
	for _, tc := range []struct {
		body string
		code string
	}{
		{`{"PartitionKey":"a/b","RowKey":"1"}`, "OutOfRangeInput"},
		{`{"PartitionKey":"a","RowKey":"1","123":1}`, "PropertyNameInvalid"},
		{`{"PartitionKey":1,"RowKey":"1"}`, "InvalidInput"},
		{`{"PartitionKey":"a","RowKey":"1","X@odata.type":"Edm.Int64","X":"9223372036854775808"}`, "InvalidInput"},
		{`{"PartitionKey":"a","RowKey":"1","S":"` + strings.Repeat("x", 40000) + `"}`, "PropertyValueTooLarge"},
	} {
		_, err := c.AddEntity(ctx(t), []byte(tc.body), nil)
		respErr(t, err, http.StatusBadRequest, tc.code)
	}
}

// A struct with aztables.Entity sends Timestamp 0001-01-01, which the
// server ignores.
func TestServerStructEntity(t *testing.T) {
	_, svc := newService(t)
	c := newTable(t, svc)
	type order struct {
		aztables.Entity
		Amount float64
		Items  int
	}
	o := order{Entity: aztables.Entity{PartitionKey: "o", RowKey: "1"}, Amount: 9.5, Items: 3}
	if _, err := c.AddEntity(ctx(t), mustJSON(t, o), nil); err != nil {
		t.Fatalf("add struct: %v", err)
	}
	got, err := c.GetEntity(ctx(t), "o", "1", nil)
	if err != nil {
		t.Fatal(err)
	}
	var back order
	if err := jsonUnmarshal(got.Value, &back); err != nil || back.Amount != 9.5 || back.Items != 3 || time.Time(back.Timestamp).Year() < 2000 {
		t.Fatalf("struct round trip: %+v %v (%s)", back, err, got.Value)
	}
}
