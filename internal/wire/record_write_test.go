package wire

import (
	"encoding/binary"
	"errors"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tablestore/tablestore/driver"
	"github.com/tablestore/tablestore/edm"
	"github.com/tablestore/tablestore/internal/entityenc"
)

// decodeAndAppend is what AppendRecord replaces: the record decoded into
// an Entity as the root package decodes a page's rows, then AppendEntity.
func decodeAndAppend(dst []byte, pk, rk, etag string, rec driver.Record, o *Options) ([]byte, error) {
	ticks, err := rec.Timestamp()
	if err != nil {
		return dst, corruptRecord(pk, rk, err)
	}
	var d entityenc.Decoder
	if len(o.Select) > 0 {
		d.Select = o.Select
	}
	props, err := d.Properties(rec)
	if err != nil {
		return dst, corruptRecord(pk, rk, err)
	}
	e := Entity{PartitionKey: pk, RowKey: rk, Timestamp: edm.TimeFromTicks(ticks), ETag: etag, Properties: props}
	return AppendEntity(dst, &e, o)
}

// sameResult fails t unless AppendRecord's result matches the reference's:
// the same bytes, or errors saying the same (a corrupt record the same
// damage, as a *driver.CorruptError).
func sameResult(t *testing.T, what string, got []byte, gotErr error, want []byte, wantErr error) {
	t.Helper()
	switch {
	case gotErr == nil && wantErr == nil:
		if string(got) != string(want) {
			t.Fatalf("%s:\nAppendRecord %s\nreference    %s", what, got, want)
		}
	case gotErr == nil || wantErr == nil:
		t.Fatalf("%s: AppendRecord error %v, reference error %v\nAppendRecord %s\nreference    %s", what, gotErr, wantErr, got, want)
	case gotErr.Error() != wantErr.Error():
		t.Fatalf("%s: AppendRecord error %q, reference error %q", what, gotErr, wantErr)
	}
	if wantErr != nil && errors.Is(wantErr, driver.ErrCorrupt) {
		var ce *driver.CorruptError
		if !errors.As(gotErr, &ce) || !errors.Is(gotErr, driver.ErrCorrupt) {
			t.Fatalf("%s: corruption reported as %T %v", what, gotErr, gotErr)
		}
	}
}

// gen draws test data from fuzz input, giving zeros once it runs out.
type gen struct{ b []byte }

func (g *gen) byte() byte {
	if len(g.b) == 0 {
		return 0
	}
	c := g.b[0]
	g.b = g.b[1:]
	return c
}

func (g *gen) uint64() uint64 {
	var x uint64
	for range 8 {
		x = x<<8 | uint64(g.byte())
	}
	return x
}

func (g *gen) bytes() []byte {
	n := int(g.byte() % 12)
	if n > len(g.b) {
		n = len(g.b)
	}
	b := g.b[:n:n]
	g.b = g.b[n:]
	return b
}

// text draws a string: mostly valid UTF-8 from an alphabet rich in
// characters that need escaping, sometimes raw bytes.
func (g *gen) text() string {
	b := g.bytes()
	if len(b) > 0 && b[0]%16 == 0 {
		return string(b)
	}
	var sb strings.Builder
	for _, c := range b {
		sb.WriteString(alphabet[int(c)%len(alphabet)])
	}
	return sb.String()
}

var alphabet = []string{"a", "Z", "0", " ", "'", "\"", "\\", "/", "%", "?", "#", "\n", "\x00", "\x1f", "é", "€", "😀", "\u2028", "+", "&"}

func (g *gen) pick(s []string) string { return s[int(g.byte())%len(s)] }

// names are property names: valid ones, mostly, and some no property may
// have, as a hand-made record could hold.
var names = []string{"A", "B", "Name", "name", "Age", "ETag", "_x", "Zz9", "Ünïcode", "ab", "abc",
	"PartitionKey", "RowKey", "Timestamp", "1bad", "a-b", "", strings.Repeat("L", 256), "\xffbad"}

// selectable are $select names: properties, absent names and system
// names.
var selectable = []string{"A", "Name", "Age", "ETag", "Missing", "abc", "PartitionKey", "Timestamp", "RowKey", "Ünïcode", "_x", "Pa", "Pb"}

// value draws a property value of one of the eight types, or of a Go
// integer type, as a map holds it; mostly valid, sometimes what only a
// hand-made record holds (invalid UTF-8, times outside years 1 to 9999).
func (g *gen) value() any {
	switch g.byte() % 11 {
	case 0:
		return g.text()
	case 1:
		return int32(g.uint64())
	case 2:
		return int64(g.uint64())
	case 3:
		switch g.byte() % 6 {
		case 0:
			return math.NaN()
		case 1:
			return math.Inf(int(g.byte()%2)*2 - 1)
		case 2:
			return math.Copysign(0, -1)
		case 3:
			return float64(int64(g.uint64()) % 100000)
		}
		return math.Float64frombits(g.uint64())
	case 4:
		return g.byte()%2 == 1
	case 5:
		var ticks int64
		switch g.byte() % 8 {
		case 0:
			ticks = int64(g.uint64())
		case 1:
			ticks = edm.MaxTicks - int64(g.byte())
		case 2:
			ticks = int64(g.byte()) - 128
		default:
			ticks = edm.MinAzureTicks + int64(g.uint64()%uint64(edm.MaxTicks-edm.MinAzureTicks))
		}
		return dateTicks(ticks)
	case 6:
		var u edm.GUID
		binary.LittleEndian.PutUint64(u[:], g.uint64())
		binary.LittleEndian.PutUint64(u[8:], g.uint64())
		return u
	case 7:
		return g.bytes()
	case 8:
		return int(int64(g.uint64()))
	case 9:
		return uint8(g.byte())
	}
	return "plain text"
}

// dateTicks is a DateTime value in ticks, which may lie outside the
// range of time.Time values EncodeValue takes.
type dateTicks int64

// record encodes props, a map as entityenc takes it apart from DateTime
// values given as dateTicks, into a record with Timestamp ticks: through
// entityenc.AppendProperties when it accepts the map, else property by
// property, with EncodeValue where it accepts the value and by hand where
// it does not.
func record(ticks int64, props map[string]any) driver.Record {
	rec := driver.AppendHeader(nil, ticks)
	m := map[string]any{}
	for name, v := range props {
		if d, ok := v.(dateTicks); ok {
			v = edm.TimeFromTicks(int64(d))
		}
		m[name] = v
	}
	if out, _, _, err := entityenc.AppendProperties(rec, m, nil); err == nil {
		return out
	}
	sorted := slices.Sorted(func(yield func(string) bool) {
		for name := range props {
			if !yield(name) {
				return
			}
		}
	})
	for _, name := range sorted {
		v := props[name]
		var ev edm.Value
		if d, ok := v.(dateTicks); ok {
			ev = edm.Value{Type: edm.TypeDateTime, Int: int64(d)}
		} else if e, _, err := entityenc.EncodeValue(name, v); err == nil {
			ev = e
		} else if s, ok := v.(string); ok {
			ev = edm.Value{Type: edm.TypeString, Bytes: []byte(s)}
		} else {
			panic("test value refused: " + err.Error())
		}
		rec = driver.AppendName(rec, name, ev.Type)
		switch ev.Type {
		case edm.TypeString, edm.TypeBinary:
			rec = driver.AppendBytesPayload(rec, ev.Bytes)
		case edm.TypeDouble:
			rec = driver.AppendDoublePayload(rec, ev.Float)
		case edm.TypeGuid:
			rec = append(rec, ev.Bytes...)
		default:
			rec = driver.AppendIntPayload(rec, ev.Type, ev.Int)
		}
	}
	return rec
}

// entity draws an entity from fuzz input: keys, ETag, Timestamp ticks and
// properties, and the record that stores them.
func (g *gen) entity() (pk, rk, etag string, rec driver.Record) {
	pk, rk = g.text(), g.text()
	switch g.byte() % 3 {
	case 0:
		etag = `W/"datetime'2024-01-02T03%3A04%3A05.0000000Z'"`
	case 1:
		etag = g.text()
	}
	var ticks int64
	switch g.byte() % 8 {
	case 0:
	case 1:
		ticks = int64(g.uint64())
	case 2:
		ticks = int64(g.byte()) - 128
	default:
		ticks = edm.MinAzureTicks + int64(g.uint64()%uint64(edm.MaxTicks-edm.MinAzureTicks))
	}
	props := map[string]any{}
	for n := g.byte() % 12; n > 0; n-- {
		name := g.pick(names)
		if g.byte()%8 != 0 {
			if _, err := entityenc.CheckPropertyName(name); err != nil {
				name = "P" + string('a'+rune(g.byte()%26))
			}
		}
		props[name] = g.value()
	}
	rec = record(ticks, props)
	// Damage, sometimes: a cut or a changed byte.
	switch g.byte() % 16 {
	case 1:
		rec = rec[:int(g.uint64()%uint64(len(rec)+1))]
	case 2:
		rec[int(g.uint64()%uint64(len(rec)))] ^= g.byte() | 1
	}
	return pk, rk, etag, rec
}

// options draws the options of one call.
func (g *gen) options(level Level) *Options {
	o := &Options{Level: level, Type: "acct.People"}
	if n := int(g.byte() % 5); n > 0 && g.byte()%2 == 0 {
		for range n {
			o.Select = append(o.Select, g.pick(selectable))
		}
		if g.byte()%8 == 0 {
			o.Select = append(o.Select, "bad-name")
		}
	}
	switch g.byte() % 3 {
	case 0:
		o.ID, o.EditLink = "https://acct.table.core.windows.net/x", "x"
	case 1:
		o.LinkBase, o.LinkTable = "http://127.0.0.1:10002/devstoreaccount1/", "People"
	}
	return o
}

func FuzzAppendRecordMatchesAppendEntity(f *testing.F) {
	f.Add([]byte("seed"))
	f.Add([]byte{1, 'p', 1, 'r', 0, 2, 9, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 1, 2, 3, 4, 5, 6, 7})
	f.Add([]byte("\x05abcde\x03xyz\x01\x02\x0b\x11\x00\x02\x03\x05\x04\x06\x07\x08\x09\x0a\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c\x0d\x0e\x0f"))
	f.Fuzz(func(t *testing.T, data []byte) {
		g := &gen{b: data}
		pk, rk, etag, rec := g.entity()
		for _, level := range []Level{None, Minimal, Full} {
			o := g.options(level)
			want, wantErr := decodeAndAppend([]byte("prefix"), pk, rk, etag, rec, o)
			got, gotErr := AppendRecord([]byte("prefix"), pk, rk, etag, rec, o)
			sameResult(t, "level "+string("NMF"[level])+" select "+strings.Join(o.Select, ","), got, gotErr, want, wantErr)
			if gotErr != nil && string(got) != "prefix" {
				t.Fatalf("AppendRecord returned %q with its error", got)
			}
			if gotErr == nil && o.LinkTable != "" && level == Full {
				// The derived links are the ones a caller would give.
				path := EntityPath(o.LinkTable, pk, rk)
				given := *o
				given.LinkBase, given.LinkTable, given.ID, given.EditLink = "", "", o.LinkBase+path, path
				want, err := AppendRecord([]byte("prefix"), pk, rk, etag, rec, &given)
				if err != nil || string(got) != string(want) {
					t.Fatalf("derived links:\n%s\ngiven links:\n%s (%v)", got, want, err)
				}
			}
		}
	})
}

// typicalRecord is an entity of ten properties of every type.
func typicalRecord(tb testing.TB) driver.Record {
	props := map[string]any{
		"Name":     "Ada Lovelace",
		"City":     "London",
		"Age":      int32(36),
		"Visits":   int64(1) << 40,
		"Score":    97.25,
		"Active":   true,
		"Born":     time.Date(1815, 12, 10, 8, 30, 0, 0, time.UTC).AddDate(200, 0, 0),
		"ID":       edm.GUID{0x12, 0x34, 0x56, 0x78, 0x9a, 0xbc, 0xde, 0xf0, 1, 2, 3, 4, 5, 6, 7, 8},
		"Avatar":   []byte("\x89PNG\r\n\x1a\n0123456789"),
		"Balance":  -1234.5,
		"Unlisted": false,
	}
	delete(props, "Unlisted")
	rec, _, _, err := entityenc.AppendProperties(driver.AppendHeader(nil, edm.TicksFromTime(time.Date(2024, 5, 6, 7, 8, 9, 123456700, time.UTC))), props, nil)
	if err != nil {
		tb.Fatal(err)
	}
	return rec
}

const typicalETag = `W/"datetime'2024-05-06T07%3A08%3A09.1234567Z'"`

func TestAppendRecordTypical(t *testing.T) {
	rec := typicalRecord(t)
	for _, o := range []*Options{
		{Level: None}, {Level: Minimal},
		{Level: Full, Type: "acct.People", LinkBase: "http://h/acct/", LinkTable: "People"},
		{Level: Minimal, Select: []string{"Age", "Missing", "RowKey", "Born", "Missing"}},
	} {
		want, err := decodeAndAppend(nil, "p'1", "r/2", typicalETag, rec, o)
		if err != nil {
			t.Fatal(err)
		}
		got, err := AppendRecord(nil, "p'1", "r/2", typicalETag, rec, o)
		sameResult(t, "typical", got, err, want, nil)
	}
	got, _ := AppendRecord(nil, "p'1", "r/2", typicalETag, rec, &Options{Level: Full, Type: "acct.People", LinkBase: "http://h/acct/", LinkTable: "People", Select: []string{"Age", "Gone"}})
	const want = `{"odata.type":"acct.People","odata.id":"http://h/acct/People(PartitionKey='p''1',RowKey='r%2F2')",` +
		`"odata.editLink":"People(PartitionKey='p''1',RowKey='r%2F2')","Timestamp@odata.type":"Edm.DateTime",` +
		`"odata.etag":"W/\"datetime'2024-05-06T07%3A08%3A09.1234567Z'\"","PartitionKey":"p'1","RowKey":"r/2",` +
		`"Timestamp":"2024-05-06T07:08:09.1234567Z","Age":36,"Gone":null}`
	if string(got) != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

// TestAppendRecordCorrupt cuts a record at every length and damages each
// of its bytes: AppendRecord never panics, reports damage the record
// reader finds as corruption (invalid UTF-8 is AppendEntity's refusal,
// and only in what it writes), and agrees with the reference.
func TestAppendRecordCorrupt(t *testing.T) {
	rec := typicalRecord(t)
	check := func(r driver.Record) {
		t.Helper()
		o := &Options{Level: Full, Select: []string{"Age", "Name", "Nope"}}
		got, err := AppendRecord(nil, "p", "r", "", r, o)
		want, wantErr := decodeAndAppend(nil, "p", "r", "", r, o)
		sameResult(t, "damaged record", got, err, want, wantErr)
		it := r.Iter()
		for it.Next() {
		}
		if (it.Err() != nil) != errors.Is(err, driver.ErrCorrupt) {
			t.Fatalf("record %x: reading it gives %v, AppendRecord %v", []byte(r), it.Err(), err)
		}
	}
	for n := range len(rec) {
		check(rec[:n:n])
	}
	for i := range rec {
		for _, x := range []byte{1, 0x80, 0xff} {
			r := slices.Clone(rec)
			r[i] ^= x
			check(r)
		}
	}
	if _, err := AppendRecord(nil, "p", "r", "", rec[:5], &Options{}); !errors.Is(err, driver.ErrCorrupt) {
		t.Errorf("a cut header gives %v", err)
	}
}

// TestAppendRecordErrorOrder checks that damage anywhere in a record is
// reported before a refusal AppendEntity would make, as when decoding
// comes first.
func TestAppendRecordErrorOrder(t *testing.T) {
	rec := record(0, map[string]any{"A": "\xff", "B": int32(1)})
	_, err := AppendRecord(nil, "p", "r", "", rec, &Options{})
	if err == nil || errors.Is(err, driver.ErrCorrupt) {
		t.Fatalf("invalid UTF-8 gives %v", err)
	}
	_, err = AppendRecord(nil, "p", "r", "", rec[:len(rec)-1], &Options{})
	if !errors.Is(err, driver.ErrCorrupt) {
		t.Fatalf("invalid UTF-8 in a cut record gives %v", err)
	}
	_, err = AppendRecord(nil, "p", "r", "", rec[:len(rec)-1], &Options{Select: []string{"a-b"}})
	if !errors.Is(err, driver.ErrCorrupt) {
		t.Fatalf("a bad select on a cut record gives %v", err)
	}
}

func TestAppendEntityLinks(t *testing.T) {
	e := &Entity{PartitionKey: "a b", RowKey: "c\"d", Properties: map[string]any{"X": int32(1)}}
	got, err := AppendEntity(nil, e, &Options{Level: Full, Type: "t", LinkBase: `http://h/"q"/`, LinkTable: "T"})
	if err != nil {
		t.Fatal(err)
	}
	path := EntityPath("T", e.PartitionKey, e.RowKey)
	want, _ := AppendEntity(nil, e, &Options{Level: Full, Type: "t", ID: `http://h/"q"/` + path, EditLink: path})
	if string(got) != string(want) {
		t.Errorf("derived links:\n%s\ngiven:\n%s", got, want)
	}
	// Links given win over derived ones; other levels write none.
	got, _ = AppendEntity(nil, e, &Options{Level: Full, ID: "id", EditLink: "el", LinkTable: "T"})
	if !strings.Contains(string(got), `"odata.id":"id","odata.editLink":"el"`) {
		t.Errorf("given links lost: %s", got)
	}
	got, _ = AppendEntity(nil, e, &Options{Level: Minimal, LinkTable: "T"})
	if strings.Contains(string(got), "odata.id") {
		t.Errorf("minimal metadata with links: %s", got)
	}
}

func TestAppendRecordAllocs(t *testing.T) {
	rec := typicalRecord(t)
	e := &Entity{PartitionKey: "p", RowKey: "r", Timestamp: time.Now(), ETag: typicalETag}
	var d entityenc.Decoder
	e.Properties, _ = d.Properties(rec)
	buf := make([]byte, 0, 4096)
	for _, o := range []*Options{
		{Level: None}, {Level: Minimal}, {Level: Minimal, Select: []string{"Age", "Nope", "Born"}},
		{Level: Full, Type: "acct.People", LinkBase: "http://h/acct/", LinkTable: "People"},
	} {
		if n := testing.AllocsPerRun(100, func() {
			if _, err := AppendRecord(buf[:0], "p", "r", typicalETag, rec, o); err != nil {
				t.Fatal(err)
			}
		}); n != 0 {
			t.Errorf("AppendRecord at level %d, select %v: %v allocations", o.Level, o.Select, n)
		}
		if n := testing.AllocsPerRun(100, func() {
			if _, err := AppendEntity(buf[:0], e, o); err != nil {
				t.Fatal(err)
			}
		}); n != 0 {
			t.Errorf("AppendEntity at level %d, select %v: %v allocations", o.Level, o.Select, n)
		}
	}
}

func BenchmarkWriteEntity(b *testing.B) {
	rec := typicalRecord(b)
	for _, level := range []struct {
		name  string
		level Level
	}{{"Minimal", Minimal}, {"None", None}} {
		o := &Options{Level: level.level}
		buf := make([]byte, 0, 4096)
		b.Run("DecodeAppendEntity/"+level.name, func(b *testing.B) {
			var d entityenc.Decoder // one page's decoder
			b.ReportAllocs()
			for b.Loop() {
				ticks, _ := rec.Timestamp()
				props, err := d.Properties(rec)
				if err != nil {
					b.Fatal(err)
				}
				e := Entity{PartitionKey: "p", RowKey: "r", Timestamp: edm.TimeFromTicks(ticks), ETag: typicalETag, Properties: props}
				if buf, err = AppendEntity(buf[:0], &e, o); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("AppendRecord/"+level.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				var err error
				if buf, err = AppendRecord(buf[:0], "p", "r", typicalETag, rec, o); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
