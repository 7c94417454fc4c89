package modeltest

import (
	"encoding/hex"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	ts "github.com/tablestore/tablestore"
)

// kind names what an operation does; it is the first word of the
// operation's line.
type kind string

// The operations of the workload. Each uses only some of Op's fields; the
// parser rejects a line that lacks one its kind needs (see required).
const (
	kindCreateTable     kind = "create-table"     // table
	kindDeleteTable     kind = "delete-table"     // table
	kindListTables      kind = "list-tables"      // prefix top
	kindInsert          kind = "insert"           // table entity [want]
	kindGet             kind = "get"              // table pk rk [select]
	kindUpdate          kind = "update"           // table entity mode if-match [want]
	kindUpsert          kind = "upsert"           // table entity mode [want]
	kindDelete          kind = "delete"           // table pk rk if-match
	kindCheck           kind = "check"            // table pk rk: read back one key
	kindTransaction     kind = "tx"               // table actions [fault]
	kindQuery           kind = "query"            // table filter select top iterate reverse
	kindQueryWrites     kind = "query-writes"     // table filter top writes
	kindPartitionInsert kind = "partition-insert" // table entity empty-pk
	kindPartitionUpsert kind = "partition-upsert" // table entity mode empty-pk
	kindPartitionUpdate kind = "partition-update" // table entity mode if-match empty-pk
	kindPartitionQuery  kind = "partition-query"  // table pk filter top iterate reverse
	kindPartitionDelete kind = "partition-delete" // table pk from to all
	kindSegments        kind = "segments"         // table n filter top reverse
	kindReopen          kind = "reopen"           // close the store and open it again
	kindCreateIndex     kind = "create-index"     // table index props partitioned
	kindDropIndex       kind = "drop-index"       // table index
	kindSetTTL          kind = "set-ttl"          // table dur prop
	kindAdvance         kind = "advance"          // dur: move the store's clock forward
	kindEnableFeed      kind = "enable-feed"      // table images
	kindDisableFeed     kind = "disable-feed"     // table
	kindReadChanges     kind = "read-changes"     // table pk n top iterate
)

// kinds lists every kind, for the parser.
var kinds = []kind{
	kindCreateTable, kindDeleteTable, kindListTables, kindInsert, kindGet,
	kindUpdate, kindUpsert, kindDelete, kindCheck, kindTransaction, kindQuery,
	kindQueryWrites, kindPartitionInsert, kindPartitionUpsert,
	kindPartitionUpdate, kindPartitionQuery, kindPartitionDelete,
	kindSegments, kindReopen, kindCreateIndex, kindDropIndex, kindSetTTL,
	kindAdvance, kindEnableFeed, kindDisableFeed, kindReadChanges,
}

// ifMatch names an If-Match value in terms the store and the model both
// resolve when the operation runs, since ETags themselves differ between
// them and between runs:
//
//	""       no ETag (the empty string is sent)
//	*        the wildcard
//	current  the entity's current version
//	vN       version N (from 0) of the entity's current lifetime, the
//	         versions written since it was last created
//	stale    a well-formed ETag of a version that never existed
//	garbage  a malformed ETag
//
// current and vN resolve to stale when the version is unknown.
type ifMatch string

// Op is one operation of the workload, complete: everything it does and
// every random choice in it are in its fields, so the store under test
// and the model can both run it, and its line (String) replays it. Ops
// are made by Generate or ParseOp; the zero Op is not valid.
type Op struct {
	kind    kind
	table   string
	kept    bool // address the table through the handle kept from an earlier op, if any
	pk, rk  string
	prefix  string
	from    string
	to      string
	all     bool // partition-delete: DeleteAll rather than DeleteRange
	mode    ts.UpdateMode
	ifMatch ifMatch
	emptyPK bool     // partition writes: the entity's PartitionKey is left ""
	sel     []string // nil: no $select
	filter  string   // may hold {stamp N} placeholders (see stampPlaceholder)
	top     int
	n       int
	iterate bool // read through the iterator rather than by pages
	reverse bool
	want    ts.Code // the code an invalid input was built to fail with
	fault   string  // tx: the one fault in form, "" for none
	entity  *ts.Entity
	actions []action // tx
	writes  []action // query-writes: run between pages (delete or upsert-replace)
	// index names an index: create-index, drop-index, and a query read
	// through it in index order (Query.Index).
	index       string
	props       []string // create-index: the indexed properties
	partitioned bool     // create-index
	dur         time.Duration
	prop        string       // set-ttl: the TTL property
	images      ts.ImageMode // enable-feed; 0 is keys only
}

// action is one action of a transaction, or one write between the pages
// of a query-writes.
type action struct {
	typ      ts.ActionType
	ifMatch  ifMatch
	asStruct bool // submitted as a struct (when structOf can carry the entity)
	entity   *ts.Entity
}

// actionNames are the names of the action types in a line.
var actionNames = map[ts.ActionType]string{
	ts.ActionInsert:        "insert",
	ts.ActionUpdateMerge:   "update-merge",
	ts.ActionUpdateReplace: "update-replace",
	ts.ActionUpsertMerge:   "upsert-merge",
	ts.ActionUpsertReplace: "upsert-replace",
	ts.ActionDelete:        "delete",
}

// String returns the operation's line: its kind, then its non-zero fields
// as name=value (or a bare name for a flag) in a fixed order, entity and
// actions last. Strings are Go-quoted, so the line holds no newline.
// ParseOp reads it back to an equal Op, whose String is the same line.
func (op Op) String() string {
	var b strings.Builder
	b.WriteString(string(op.kind))
	str := func(name, v string) {
		if v != "" {
			b.WriteString(" " + name + "=" + strconv.Quote(v))
		}
	}
	flag := func(name string, v bool) {
		if v {
			b.WriteString(" " + name)
		}
	}
	num := func(name string, v int) {
		if v != 0 {
			fmt.Fprintf(&b, " %s=%d", name, v)
		}
	}
	str("table", op.table)
	flag("kept", op.kept)
	str("pk", op.pk)
	str("rk", op.rk)
	str("prefix", op.prefix)
	str("from", op.from)
	str("to", op.to)
	flag("all", op.all)
	if op.mode != 0 {
		b.WriteString(" mode=" + op.mode.String())
	}
	if op.ifMatch != "" {
		b.WriteString(" if-match=" + string(op.ifMatch))
	}
	flag("empty-pk", op.emptyPK)
	if op.sel != nil {
		b.WriteString(" select=")
		writeStrings(&b, op.sel)
	}
	str("filter", op.filter)
	num("top", op.top)
	num("n", op.n)
	flag("iterate", op.iterate)
	flag("reverse", op.reverse)
	str("index", op.index)
	if op.props != nil {
		b.WriteString(" props=")
		writeStrings(&b, op.props)
	}
	flag("partitioned", op.partitioned)
	if op.dur != 0 {
		b.WriteString(" dur=" + op.dur.String())
	}
	str("prop", op.prop)
	if op.images == ts.ImagesNew {
		b.WriteString(" images=new")
	}
	if op.want != "" {
		b.WriteString(" want=" + string(op.want))
	}
	if op.fault != "" {
		b.WriteString(" fault=" + op.fault)
	}
	if op.entity != nil {
		b.WriteString(" entity=")
		writeEntity(&b, op.entity)
	}
	writeActions(&b, "actions", op.actions)
	writeActions(&b, "writes", op.writes)
	return b.String()
}

// writeStrings writes a list of strings as ["a","b"].
func writeStrings(b *strings.Builder, list []string) {
	b.WriteString("[")
	for i, s := range list {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(strconv.Quote(s))
	}
	b.WriteString("]")
}

// writeActions writes a list of actions as name=[{...} {...}].
func writeActions(b *strings.Builder, name string, as []action) {
	if as == nil {
		return
	}
	b.WriteString(" " + name + "=[")
	for i, a := range as {
		if i > 0 {
			b.WriteString(" ")
		}
		b.WriteString("{type=" + actionNames[a.typ])
		if a.ifMatch != "" {
			b.WriteString(" if-match=" + string(a.ifMatch))
		}
		if a.asStruct {
			b.WriteString(" struct")
		}
		if a.entity != nil {
			b.WriteString(" entity=")
			writeEntity(b, a.entity)
		}
		b.WriteString("}")
	}
	b.WriteString("]")
}

// writeEntity writes ("pk","rk"){"Name":value ...}, properties in name
// order. Timestamp and ETag are not part of an operation.
func writeEntity(b *strings.Builder, e *ts.Entity) {
	fmt.Fprintf(b, "(%s,%s){", strconv.Quote(e.PartitionKey), strconv.Quote(e.RowKey))
	names := make([]string, 0, len(e.Properties))
	for name := range e.Properties {
		names = append(names, name)
	}
	sort.Strings(names)
	for i, name := range names {
		if i > 0 {
			b.WriteString(" ")
		}
		b.WriteString(strconv.Quote(name) + ":" + formatValue(e.Properties[name]))
	}
	b.WriteString("}")
}

// runLength is the length from which a string of one repeated byte, or a
// binary of zeros, prints in the short form.
const runLength = 32

// invalidValues are the values of Go types the store rejects, by the
// name they print with.
var invalidValues = map[string]func() any{
	"complex": func() any { return complex(1, 0) },
	"pointer": func() any { return new(int32) },
	"ints":    func() any { return []int{7} },
	"float32": func() any { return float32(1) },
	"struct":  func() any { return struct{}{} },
	"strings": func() any { return []string{"a"} },
	"map":     func() any { return map[string]int{} },
}

// invalidNames is the sorted list of invalidValues' names, for the
// generator.
var invalidNames = func() []string {
	var names []string
	for name := range invalidValues {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}()

// formatValue prints one property value, canonically (one text per
// value):
//
//	null  true  false  "Go-quoted string"  repeat("s",40000)
//	int32(5)  int64(-2)  double(1.5)  double(NaN)  double(-0)
//	datetime(2024-05-06T04:08:09.1234567Z)  guid(…)
//	datetime(2024-05-06T04:08:09.1234567Z, +03:00)
//	binary(01ff)  zeros(60000)  invalid(float32)
//
// A datetime is the instant in UTC, then the zone offset (to the minute)
// when it is not zero: the store keeps the instant only, but the
// workload writes times in other zones too.
func formatValue(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case bool:
		return strconv.FormatBool(v)
	case string:
		if len(v) >= runLength && strings.Count(v, v[:1]) == len(v) {
			return "repeat(" + strconv.Quote(v[:1]) + "," + strconv.Itoa(len(v)) + ")"
		}
		return strconv.Quote(v)
	case int32:
		return "int32(" + strconv.FormatInt(int64(v), 10) + ")"
	case int64:
		return "int64(" + strconv.FormatInt(v, 10) + ")"
	case float64:
		if math.IsNaN(v) {
			return "double(NaN)"
		}
		return "double(" + strconv.FormatFloat(v, 'g', -1, 64) + ")"
	case time.Time:
		s := v.UTC().Format(time.RFC3339Nano)
		if _, off := v.Zone(); off != 0 {
			s += ", " + v.Format("-07:00")
		}
		return "datetime(" + s + ")"
	case ts.GUID:
		return "guid(" + v.String() + ")"
	case []byte:
		if len(v) >= runLength && allZero(v) {
			return "zeros(" + strconv.Itoa(len(v)) + ")"
		}
		return "binary(" + hex.EncodeToString(v) + ")"
	case complex128:
		return "invalid(complex)"
	case *int32:
		return "invalid(pointer)"
	case []int:
		return "invalid(ints)"
	case float32:
		return "invalid(float32)"
	case struct{}:
		return "invalid(struct)"
	case []string:
		return "invalid(strings)"
	case map[string]int:
		return "invalid(map)"
	}
	// The generator makes none other; print something the parser rejects.
	return fmt.Sprintf("unprintable(%T)", v)
}

func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// Log is a workload as text: the seed of the clock it runs on, and its
// operations in order. Replay runs a Log; the same Log gives the store
// the same calls.
type Log struct {
	// Seed seeds the clock the Opener receives (and, for a generated
	// workload, is the seed it was generated from).
	Seed int64
	Ops  []Op
}

// WriteTo writes the log in the form ReadLog reads: the line "seed N",
// then one line per operation. It implements io.WriterTo.
func (l *Log) WriteTo(w io.Writer) (int64, error) {
	var b strings.Builder
	fmt.Fprintf(&b, "seed %d\n", l.Seed)
	for _, op := range l.Ops {
		b.WriteString(op.String())
		b.WriteByte('\n')
	}
	n, err := io.WriteString(w, b.String())
	return int64(n), err
}
