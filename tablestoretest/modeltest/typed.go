package modeltest

import (
	"fmt"
	"reflect"
	"sort"
	"time"

	ts "github.com/tablestore/tablestore"
)

// This file checks the typed paths (GetStruct, QueryStructPage, structs in a
// transaction) against the map paths they mirror.

// typedRow maps the workload's property names to one Go type each, so
// the typed reads meet both properties that fit and ones that do not.
type typedRow struct {
	PartitionKey, RowKey string
	Timestamp            time.Time
	ETag                 ts.ETag
	A                    string
	B                    int64
	C                    float64
	Name                 string
	Count                int32
	Flag                 bool
	When                 time.Time
	Id                   ts.GUID
	Blob                 []byte
	Price                float64
	X                    int64 `table:"_x"`
	Big                  string
}

// sameTyped checks a typed read against the map read it mirrors: the map
// read's entity through UnmarshalEntity gives the same value or the same
// error.
func (r *runner) sameTyped(what string, e *ts.Entity, mapErr error, got typedRow, gotErr error) {
	var want typedRow
	wantErr := mapErr
	if wantErr == nil {
		wantErr = ts.UnmarshalEntity(e, &want)
	}
	if fmt.Sprint(wantErr) != fmt.Sprint(gotErr) {
		r.failf("%s: error %v, the map path's %v", what, gotErr, wantErr)
	}
	if wantErr == nil && fmt.Sprintf("%+v", want) != fmt.Sprintf("%+v", got) {
		r.failf("%s: %+v, the map path gives %+v", what, got, want)
	}
}

// sameTypedPage reads page q again with QueryStructPage and checks it against
// the map page p: up to the first entity UnmarshalEntity rejects, the same
// values, then that entity's error.
func (r *runner) sameTypedPage(tb *ts.Table, q ts.Query, p *ts.Page) {
	tp, err := ts.QueryStructPage[typedRow](r.ctx, tb, q)
	// On a table with a time-to-live, the store's sweeper may remove
	// expired entities between the two reads: a page that scans no
	// further ends elsewhere, so only the entities both hold compare.
	ttl, _ := r.ref.m.TTL(tb.Name())
	swept := ttl != (ts.TTL{})
	for i, e := range p.Entities {
		if swept && err == nil && i >= len(tp.Entities) {
			break
		}
		var want typedRow
		if werr := ts.UnmarshalEntity(e, &want); werr != nil {
			if fmt.Sprint(werr) != fmt.Sprint(err) {
				r.failf("QueryStructPage: error %v, the map path's %v", err, werr)
			}
			return
		}
		if err != nil {
			continue // the typed page failed at a later entity
		}
		if i >= len(tp.Entities) || fmt.Sprintf("%+v", want) != fmt.Sprintf("%+v", tp.Entities[i]) {
			r.failf("QueryStructPage: entity %d differs from the map path's %+v", i, want)
			return
		}
	}
	if err != nil {
		if swept && r.sweptPast(tb, q, err) {
			return
		}
		r.failf("QueryStructPage: %v, where the map path succeeds", err)
		return
	}
	if !swept && (len(tp.Entities) != len(p.Entities) || tp.Continuation != p.Continuation) {
		r.failf("QueryStructPage: %d entities and continuation %q, the map path %d and %q",
			len(tp.Entities), tp.Continuation, len(p.Entities), p.Continuation)
	}
}

// sweptPast reports whether the typed page's error err belongs to an
// entity past the map page's end: on a table with a time-to-live the
// sweeper may have removed expired entities the map page spent its scan
// budget on, so the typed page read further. Sweeping only removes
// entities no read shows, so a fresh map page reaches at least as far,
// and its first entity UnmarshalEntity rejects must give err.
func (r *runner) sweptPast(tb *ts.Table, q ts.Query, err error) bool {
	p, perr := tb.QueryPage(r.ctx, q)
	if perr != nil {
		return false
	}
	for _, e := range p.Entities {
		var v typedRow
		if werr := ts.UnmarshalEntity(e, &v); werr != nil {
			return fmt.Sprint(werr) == fmt.Sprint(err)
		}
	}
	return false
}

// structOf returns a pointer to a struct holding e: its keys, Timestamp
// and ETag fields, and one field per property tagged with its name, built
// with reflect.StructOf. ok is false when a struct cannot carry e as the
// map does: a name that is not a plain identifier or names a system
// field, a value of another Go type, a nil value or byte slice (a struct
// drops them, a map keeps an empty binary), or a time MarshalEntity
// rejects before validation.
func structOf(e *ts.Entity) (reflect.Value, bool) {
	fields := []reflect.StructField{
		{Name: "PartitionKey", Type: reflect.TypeFor[string]()},
		{Name: "RowKey", Type: reflect.TypeFor[string]()},
		{Name: "Timestamp", Type: reflect.TypeFor[time.Time]()},
		{Name: "ETag", Type: reflect.TypeFor[ts.ETag]()},
	}
	names := make([]string, 0, len(e.Properties))
	for name := range e.Properties {
		names = append(names, name)
	}
	sort.Strings(names)
	for i, name := range names {
		if !plainIdentifier(name) || name == "PartitionKey" || name == "RowKey" || name == "Timestamp" || name == "ETag" {
			return reflect.Value{}, false
		}
		switch v := e.Properties[name].(type) {
		case string, int32, int64, float64, bool, ts.GUID:
		case []byte:
			if v == nil {
				return reflect.Value{}, false
			}
		case time.Time:
			if y := v.UTC().Year(); y < 1601 || y > 9999 {
				return reflect.Value{}, false
			}
		default:
			return reflect.Value{}, false
		}
		fields = append(fields, reflect.StructField{Name: fmt.Sprintf("P%d", i),
			Type: reflect.TypeOf(e.Properties[name]), Tag: reflect.StructTag(`table:"` + name + `"`)})
	}
	v := reflect.New(reflect.StructOf(fields))
	v.Elem().Field(0).SetString(e.PartitionKey)
	v.Elem().Field(1).SetString(e.RowKey)
	for i, name := range names {
		v.Elem().Field(4 + i).Set(reflect.ValueOf(e.Properties[name]))
	}
	return v, true
}

// plainIdentifier reports whether name is an ASCII letter or '_' followed
// by ASCII letters, digits and '_'.
func plainIdentifier(name string) bool {
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return name != ""
}
