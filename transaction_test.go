package tablestore

import (
	"encoding/hex"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"
	"github.com/stretchr/testify/require"

	"github.com/tablestore/tablestore/driver"
	"github.com/tablestore/tablestore/edm"
	"github.com/tablestore/tablestore/internal/entityenc"
)

// TestBatchDataDriven runs testdata/batch: entity group transactions, what
// they return and what they leave stored.
//
//	reset [clock=RFC3339]       a new store with table "tbl" (clock: the
//	                            store's clock, stopped at that instant)
//	batch [table=name] [distinct] [timestamps]
//	                            one action a line (distinct: with
//	                            DistinctTimestamps; timestamps: each written
//	                            entity's Timestamp, checked against the
//	                            stored one):
//	  insert|upsert-merge|upsert-replace|update-merge|update-replace|delete
//	    PK RK [etag=*|current|stale|none] [Name=type:value ...]
//	  repeat n=N <action line>  N copies, RowKey suffixed with the copy number
//	dump                        every entity of table tbl, in key order
func TestBatchDataDriven(t *testing.T) {
	var db *DB
	defer func() {
		if db != nil {
			_ = db.Close()
		}
	}()
	datadriven.RunTest(t, "testdata/batch", func(t *testing.T, td *datadriven.TestData) string {
		switch td.Cmd {
		case "reset":
			if db != nil {
				require.NoError(t, db.Close())
			}
			var opts *Options
			if td.HasArg("clock") {
				var at string
				td.ScanArgs(t, "clock", &at)
				stopped, err := time.Parse(time.RFC3339Nano, at)
				require.NoError(t, err)
				opts = &Options{Clock: func() time.Time { return stopped }}
			}
			var err error
			db, err = OpenInMemory(opts)
			require.NoError(t, err)
			_, err = db.CreateTable(ctx, "tbl")
			require.NoError(t, err)
			return ""
		case "batch":
			name := "tbl"
			td.MaybeScanArgs(t, "table", &name)
			tbl := db.Table(name)
			var actions []TransactionAction
			for _, line := range strings.Split(strings.TrimSpace(td.Input), "\n") {
				actions = append(actions, parseActionLine(t, tbl, line)...)
			}
			err := tbl.submitTransaction(ctx, actions, driver.CommitOptions{DistinctTimestamps: td.HasArg("distinct")})
			if err == nil {
				stamps := map[ETag]bool{}
				var out strings.Builder
				for _, a := range actions {
					if a.Type == ActionDelete {
						continue
					}
					e := a.Entity.(*Entity)
					stamps[e.ETag] = true
					if td.HasArg("timestamps") {
						stored, err := tbl.Get(ctx, e.PartitionKey, e.RowKey, nil)
						require.NoError(t, err)
						require.Equal(t, stored.ETag, e.ETag)
						require.True(t, stored.Timestamp.Equal(e.Timestamp))
						require.Equal(t, etagFor(e.Timestamp), e.ETag)
						fmt.Fprintf(&out, "\n%s %s", e.RowKey, e.Timestamp.Format(time.RFC3339Nano))
					}
				}
				return fmt.Sprintf("ok (%d distinct etags)", len(stamps)) + out.String()
			}
			be, ok := err.(*BatchError)
			if !ok {
				return fmt.Sprintf("error: %v", err)
			}
			require.ErrorIs(t, err, sentinels[be.Err.Code])
			return fmt.Sprintf("error: index=%d code=%s", be.Index, be.Err.Code)
		case "dump":
			return dumpTable(t, db, "tbl")
		}
		t.Fatalf("unknown command %q", td.Cmd)
		return ""
	})
}

func parseActionLine(t *testing.T, tbl *Table, line string) []TransactionAction {
	f := strings.Fields(line)
	if f[0] == "repeat" {
		n, err := strconv.Atoi(strings.TrimPrefix(f[1], "n="))
		require.NoError(t, err)
		rest := strings.Join(f[2:], " ")
		var out []TransactionAction
		for i := 0; i < n; i++ {
			a := parseActionLine(t, tbl, rest)[0]
			a.Entity.(*Entity).RowKey += fmt.Sprintf("%03d", i)
			out = append(out, a)
		}
		return out
	}
	types := map[string]ActionType{
		"insert": ActionInsert, "upsert-merge": ActionUpsertMerge, "upsert-replace": ActionUpsertReplace,
		"update-merge": ActionUpdateMerge, "update-replace": ActionUpdateReplace, "delete": ActionDelete,
	}
	typ, ok := types[f[0]]
	if !ok {
		typ = ActionType(99)
	}
	e := &Entity{PartitionKey: unquoteArg(f[1]), RowKey: unquoteArg(f[2]), Properties: map[string]any{}}
	a := TransactionAction{Type: typ, Entity: e}
	for _, kv := range f[3:] {
		k, v, _ := strings.Cut(kv, "=")
		if k == "etag" {
			switch v {
			case "*":
				a.IfMatch = ETagAny
			case "current":
				cur, err := tbl.Get(ctx, e.PartitionKey, e.RowKey, nil)
				require.NoError(t, err)
				a.IfMatch = cur.ETag
			case "stale":
				a.IfMatch = etagFor(time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC))
			}
			continue
		}
		e.Properties[k] = parseTypedValue(t, v)
	}
	return []TransactionAction{a}
}

// unquoteArg lets a test write an empty key as ” and control characters
// as Go escapes.
func unquoteArg(s string) string {
	if strings.HasPrefix(s, "'") {
		u, err := strconv.Unquote(`"` + strings.Trim(s, "'") + `"`)
		if err == nil {
			return u
		}
	}
	return s
}

func parseTypedValue(t *testing.T, s string) any {
	typ, v, _ := strings.Cut(s, ":")
	var out any
	var err error
	switch typ {
	case "string":
		out = v
	case "bigstring": // bigstring:N is N characters
		n, e := strconv.Atoi(v)
		out, err = strings.Repeat("x", n), e
	case "bigbinary":
		n, e := strconv.Atoi(v)
		out, err = make([]byte, n), e
	case "int32":
		var n int64
		n, err = strconv.ParseInt(v, 10, 32)
		out = int32(n)
	case "int64":
		out, err = strconv.ParseInt(v, 10, 64)
	case "int":
		out, err = strconv.Atoi(v)
	case "float32":
		var f float64
		f, err = strconv.ParseFloat(v, 32)
		out = float32(f)
	case "double":
		out, err = strconv.ParseFloat(v, 64)
	case "bool":
		out, err = strconv.ParseBool(v)
	case "datetime":
		out, err = time.Parse(time.RFC3339Nano, v)
	case "binary":
		out, err = hex.DecodeString(v)
	default:
		t.Fatalf("unknown value type %q", typ)
	}
	require.NoError(t, err)
	return out
}

func formatValue(v any) string {
	switch x := v.(type) {
	case string:
		if len(x) > 20 {
			return fmt.Sprintf("string:<%d chars>", len(x))
		}
		return "string:" + x
	case int32:
		return fmt.Sprintf("int32:%d", x)
	case int64:
		return fmt.Sprintf("int64:%d", x)
	case float64:
		return "double:" + strconv.FormatFloat(x, 'g', -1, 64)
	case bool:
		return fmt.Sprintf("bool:%t", x)
	case time.Time:
		return "datetime:" + x.Format(time.RFC3339Nano)
	case GUID:
		return "guid:" + x.String()
	case []byte:
		if len(x) > 16 {
			return fmt.Sprintf("binary:<%d bytes>", len(x))
		}
		return "binary:" + hex.EncodeToString(x)
	}
	return fmt.Sprintf("%T:%v", v, v)
}

// dumpTable prints every stored entity of the table, read by a full
// scan, with its properties in name order.
func dumpTable(t *testing.T, db *DB, name string) string {
	var b strings.Builder
	for e, err := range db.Table(name).Query(ctx, Query{}) {
		require.NoError(t, err)
		names := make([]string, 0, len(e.Properties))
		for n := range e.Properties {
			names = append(names, n)
		}
		sort.Strings(names)
		fmt.Fprintf(&b, "%s/%s:", e.PartitionKey, e.RowKey)
		for _, n := range names {
			fmt.Fprintf(&b, " %s=%s", n, formatValue(e.Properties[n]))
		}
		b.WriteString("\n")
	}
	if b.Len() == 0 {
		return "(empty)"
	}
	return b.String()
}

func TestTransactionErrorsUnwrap(t *testing.T) {
	db := openTestDB(t, nil)
	tbl, err := db.CreateTable(ctx, "txn")
	require.NoError(t, err)
	err = tbl.SubmitTransaction(ctx, nil)
	var be *BatchError
	require.ErrorAs(t, err, &be)
	require.Equal(t, 0, be.Index)
	requireCode(t, err, edm.CodeInvalidInput)

	require.NoError(t, tbl.Insert(ctx, &Entity{PartitionKey: "p", RowKey: "a"}))
	err = tbl.NewBatch().Upsert(&Entity{PartitionKey: "p", RowKey: "b"}, Merge).Insert(&Entity{PartitionKey: "p", RowKey: "a"}).Submit(ctx)
	require.ErrorAs(t, err, &be)
	require.Equal(t, 1, be.Index)
	require.ErrorIs(t, err, ErrEntityAlreadyExists)
	require.Contains(t, err.Error(), "tablestore: transaction action 1: EntityAlreadyExists")
	_, err = tbl.Get(ctx, "p", "b", nil)
	requireCode(t, err, edm.CodeResourceNotFound)

	b := tbl.NewBatch().Update(&Entity{PartitionKey: "p", RowKey: "a"}, UpdateMode(7), ETagAny)
	require.Equal(t, 1, b.Len())
	require.ErrorIs(t, b.Submit(ctx), ErrInvalidInput)

	// Entities written together share one Timestamp and ETag.
	x, y := &Entity{PartitionKey: "p", RowKey: "x"}, &Entity{PartitionKey: "p", RowKey: "y"}
	require.NoError(t, tbl.NewBatch().Insert(x).Upsert(y, Replace).Delete("p", "a", ETagAny).Submit(ctx))
	require.Equal(t, x.ETag, y.ETag)
	require.NotEmpty(t, x.ETag)
	got, err := tbl.Get(ctx, "p", "y", nil)
	require.NoError(t, err)
	require.Equal(t, y.ETag, got.ETag)
}

// TestTransactionDataLimit checks MaxTransactionBytes at its boundary: a
// transaction whose keys, names and String values hold exactly 4 MiB of
// UTF-8 is committed (Azure's entity size formula, which counts strings
// as UTF-16, makes it twice that), one byte more fails at the last
// action, and three-byte characters count three bytes each. Structs
// count as the entities MarshalEntity makes of them.
func TestTransactionDataLimit(t *testing.T) {
	db := openTestDB(t, nil)
	tbl, err := db.CreateTable(ctx, "limit")
	require.NoError(t, err)
	type row struct {
		PartitionKey, RowKey string
		A, B, C              string
	}
	// build returns 100 actions holding total bytes of data: 7 in each
	// action's keys ("p", "000".."099") and names (A, B, C), the rest in
	// 300 strings of ch, as even as ch's length allows.
	build := func(total int, ch string, structs bool) []TransactionAction {
		units := (total - 700) / len(ch)
		require.Equal(t, total-700, units*len(ch), "%d bytes cannot be made of %q", total, ch)
		str := func(k int) string {
			n := units / 300
			if k < units%300 {
				n++
			}
			return strings.Repeat(ch, n)
		}
		acts := make([]TransactionAction, 100)
		for i := range acts {
			rk := fmt.Sprintf("%03d", i)
			a, b, c := str(3*i), str(3*i+1), str(3*i+2)
			if structs {
				acts[i] = TransactionAction{Type: ActionUpsertReplace, Entity: StructEntity(&row{"p", rk, a, b, c})}
			} else {
				acts[i] = TransactionAction{Type: ActionUpsertReplace, Entity: &Entity{PartitionKey: "p", RowKey: rk,
					Properties: map[string]any{"A": a, "B": b, "C": c}}}
			}
		}
		return acts
	}
	for _, structs := range []bool{false, true} {
		require.NoError(t, tbl.SubmitTransaction(ctx, build(MaxTransactionBytes, "x", structs)), "structs=%v", structs)
		err := tbl.SubmitTransaction(ctx, build(MaxTransactionBytes+1, "x", structs))
		var be *BatchError
		require.ErrorAs(t, err, &be, "structs=%v", structs)
		require.Equal(t, 99, be.Index)
		requireCode(t, err, edm.CodeRequestBodyTooLarge)
	}
	// Three-byte characters: 4 MiB of UTF-8 (2.7 MiB as UTF-16) fits,
	// three bytes more do not.
	require.NoError(t, tbl.SubmitTransaction(ctx, build(MaxTransactionBytes, "語", false)))
	requireCode(t, tbl.SubmitTransaction(ctx, build(MaxTransactionBytes+3, "語", false)), edm.CodeRequestBodyTooLarge)
}

// TestTransactionStructsMatchMaps submits every struct write case as a
// transaction action twice: as StructEntity(v), and as MarshalEntity's
// result. Errors and stored entities must be the same.
func TestTransactionStructsMatchMaps(t *testing.T) {
	db := openTestDB(t, nil)
	structs, err := db.CreateTable(ctx, "Structs")
	require.NoError(t, err)
	maps, err := db.CreateTable(ctx, "Maps")
	require.NoError(t, err)
	for name, v := range structWriteCases() {
		for _, typ := range []ActionType{ActionUpsertMerge, ActionUpsertReplace, ActionInsert} {
			t.Run(fmt.Sprintf("%s/%s", name, typ), func(t *testing.T) {
				e, marshalErr := MarshalEntity(v)
				pk := "p"
				if marshalErr == nil {
					pk = e.PartitionKey
				}
				first := func() *Entity {
					return &Entity{PartitionKey: pk, RowKey: "first", Properties: map[string]any{"X": int32(1)}}
				}
				gotErr := structs.SubmitTransaction(ctx, []TransactionAction{
					{Type: ActionUpsertReplace, Entity: first()},
					{Type: typ, Entity: StructEntity(v)},
				})
				var wantErr error
				if marshalErr != nil {
					wantErr = asBatchError(1, marshalErr)
				} else {
					wantErr = maps.SubmitTransaction(ctx, []TransactionAction{
						{Type: ActionUpsertReplace, Entity: first()},
						{Type: typ, Entity: e},
					})
				}
				require.Equal(t, errText(wantErr), errText(gotErr))
				if wantErr != nil {
					return
				}
				got, err := structs.Get(ctx, e.PartitionKey, e.RowKey, nil)
				require.NoError(t, err)
				want, err := maps.Get(ctx, e.PartitionKey, e.RowKey, nil)
				require.NoError(t, err)
				requireSameProperties(t, want.Properties, got.Properties)
				if c, ok := v.(*Customer); ok {
					require.Equal(t, got.ETag, c.ETag, "the struct's ETag is set")
					require.Equal(t, got.Timestamp, c.Timestamp, "the struct's Timestamp is set")
				}
			})
		}
	}
}

// TestTransactionStructForm checks the checks of a transaction's form
// with structs among its actions.
func TestTransactionStructForm(t *testing.T) {
	db := openTestDB(t, nil)
	tbl, err := db.CreateTable(ctx, "Txn")
	require.NoError(t, err)
	c := func(pk, rk string) *Customer {
		v := sampleCustomer()
		v.PartitionKey, v.RowKey = pk, rk
		return &v
	}
	ent := func(pk, rk string) *Entity {
		return &Entity{PartitionKey: pk, RowKey: rk, Properties: map[string]any{"A": "a"}}
	}
	tests := []struct {
		name    string
		actions []TransactionAction
		code    Code
		index   int
	}{
		{"no entity", []TransactionAction{
			{Type: ActionUpsertMerge, Entity: StructEntity(c("p", "a"))},
			{Type: ActionUpsertMerge},
		}, edm.CodeInvalidInput, 1},
		{"nil *Entity", []TransactionAction{
			{Type: ActionUpsertMerge, Entity: ent("p", "a")},
			{Type: ActionUpsertMerge, Entity: (*Entity)(nil)},
		}, edm.CodeInvalidInput, 1},
		{"nil *RawEntity", []TransactionAction{
			{Type: ActionUpsertMerge, Entity: ent("p", "a")},
			{Type: ActionUpsertMerge, Entity: ent("p", "b")},
			{Type: ActionUpsertMerge, Entity: (*RawEntity)(nil)},
		}, edm.CodeInvalidInput, 2},
		{"struct entity of nil", []TransactionAction{
			{Type: ActionUpsertMerge, Entity: StructEntity(nil)},
		}, edm.CodeInvalidInput, 0},
		{"struct entity of a nil pointer", []TransactionAction{
			{Type: ActionUpsertMerge, Entity: ent("p", "a")},
			{Type: ActionUpsertMerge, Entity: StructEntity((*Customer)(nil))},
		}, edm.CodeInvalidInput, 1},
		{"struct entity of a map", []TransactionAction{
			{Type: ActionUpsertMerge, Entity: ent("p", "a")},
			{Type: ActionUpsertMerge, Entity: StructEntity(map[string]any{"PartitionKey": "p", "RowKey": "m"})},
		}, edm.CodeInvalidValueType, 1},
		{"struct repeats an entity's row", []TransactionAction{
			{Type: ActionUpsertMerge, Entity: ent("p", "b")},
			{Type: ActionUpsertMerge, Entity: StructEntity(c("p", "a"))},
			{Type: ActionUpsertMerge, Entity: StructEntity(c("p", "b"))},
		}, edm.CodeInvalidDuplicateRow, 2},
		{"first repeat in action order", []TransactionAction{
			{Type: ActionUpsertMerge, Entity: ent("p", "z")},
			{Type: ActionUpsertMerge, Entity: ent("p", "a")},
			{Type: ActionUpsertMerge, Entity: StructEntity(c("p", "z"))},
			{Type: ActionUpsertMerge, Entity: ent("p", "a")},
		}, edm.CodeInvalidDuplicateRow, 2},
		{"repeat after a bad action", []TransactionAction{
			{Type: ActionUpsertMerge, Entity: ent("p", "z")},
			{Type: ActionUpsertMerge, Entity: StructEntity(7)},
			{Type: ActionUpsertMerge, Entity: StructEntity(c("p", "z"))},
		}, edm.CodeInvalidValueType, 1},
		{"struct on another partition", []TransactionAction{
			{Type: ActionUpsertMerge, Entity: ent("p", "a")},
			{Type: ActionUpsertMerge, Entity: StructEntity(c("q", "b"))},
		}, edm.CodeCommandsInBatchActOnDifferentPartitions, 1},
		{"struct with a bad partition key first", []TransactionAction{
			{Type: ActionUpsertMerge, Entity: StructEntity(c("p/q", "a"))},
			{Type: ActionUpsertMerge, Entity: StructEntity(c("p/q", "b"))},
		}, edm.CodeOutOfRangeInput, 0},
		{"struct with a bad partition key after a good one", []TransactionAction{
			{Type: ActionUpsertMerge, Entity: StructEntity(c("p", "a"))},
			{Type: ActionUpsertMerge, Entity: StructEntity(c("p/q", "b"))},
		}, edm.CodeCommandsInBatchActOnDifferentPartitions, 1},
		{"bad row key after checked partition keys", []TransactionAction{
			{Type: ActionUpsertMerge, Entity: StructEntity(c("p", "a"))},
			{Type: ActionUpsertMerge, Entity: ent("p", "b")},
			{Type: ActionUpsertMerge, Entity: StructEntity(c("p", "c#"))},
		}, edm.CodeOutOfRangeInput, 2},
		{"delete by struct needs if-match", []TransactionAction{
			{Type: ActionUpsertMerge, Entity: ent("p", "a")},
			{Type: ActionDelete, Entity: StructEntity(c("p", "b"))},
		}, edm.CodeInvalidInput, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tbl.SubmitTransaction(ctx, tc.actions)
			var be *BatchError
			require.ErrorAs(t, err, &be)
			require.Equal(t, tc.index, be.Index, "%v", err)
			require.Equal(t, tc.code, be.Err.Code, "%v", err)
		})
	}
	page, err := tbl.QueryPage(ctx, Query{})
	require.NoError(t, err)
	require.Empty(t, page.Entities, "failed transactions write nothing")

	// A struct by value is written but, being a copy, gets no version.
	byValue, byPointer := *c("p", "v"), c("p", "w")
	require.NoError(t, tbl.SubmitTransaction(ctx, []TransactionAction{
		{Type: ActionInsert, Entity: StructEntity(byValue)},
		{Type: ActionInsert, Entity: StructEntity(byPointer)},
	}))
	require.Empty(t, byValue.ETag)
	got, err := tbl.Get(ctx, "p", "w", nil)
	require.NoError(t, err)
	require.Equal(t, got.ETag, byPointer.ETag)
	require.NoError(t, tbl.SubmitTransaction(ctx, []TransactionAction{{Type: ActionDelete, Entity: StructEntity(c("p", "v")), IfMatch: ETagAny}}))
	_, err = tbl.Get(ctx, "p", "v", nil)
	requireCode(t, err, edm.CodeResourceNotFound)
}

// TestActionTypeString checks the names against aztables' TransactionType
// values (constants.go of aztables v1.4.1), and that no message built
// from them reads "a int64"-style.
func TestActionTypeString(t *testing.T) {
	want := map[ActionType]string{
		ActionInsert:        "add",
		ActionUpdateMerge:   "updatemerge",
		ActionUpdateReplace: "updatereplace",
		ActionUpsertMerge:   "insertmerge",
		ActionUpsertReplace: "insertreplace",
		ActionDelete:        "delete",
	}
	for a, name := range want {
		if got := a.String(); got != name {
			t.Errorf("%d: String() = %q, want %q", uint8(a), got, name)
		}
	}
	if got := ActionType(99).String(); got != "ActionType(99)" {
		t.Errorf("unknown action: %q", got)
	}
}

// TestKeyMemo checks that a keyMemo answers as entityenc.KeyUnits does,
// for keys it holds and keys it does not, and never holds a bad key.
func TestKeyMemo(t *testing.T) {
	var m keyMemo
	for _, pk := range []string{"p", "p", "p/q", "p", "", "", "q\u00e9", "p/q", "q\u00e9", strings.Repeat("k", 1025)} {
		want, wantErr := entityenc.KeyUnits("PartitionKey", pk)
		got, err := m.partitionKeyUnits(pk)
		require.Equal(t, want, got, "%q", pk)
		require.Equal(t, wantErr, err, "%q", pk)
		if wantErr == nil {
			require.Equal(t, keyMemo{pk: pk, units: want, set: true}, m, "%q is remembered", pk)
		} else {
			require.NotEqual(t, pk, m.pk, "%q is not remembered", pk)
		}
	}
	var none *keyMemo
	got, err := none.partitionKeyUnits("p")
	require.NoError(t, err)
	require.Equal(t, 1, got)
}
