// Package propseal seals chosen properties of a table's entities before
// they reach a driver and opens them in every entity read: a driver.Table
// decorator, as internal/encfs decorates a file system. The root package
// validates its options (tablestore.PropertyEncryption) and wraps each
// table handle's driver table with Sealer.Table.
package propseal

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/tablestore/tablestore/driver"
	"github.com/tablestore/tablestore/edm"
	"github.com/tablestore/tablestore/filter"
	"github.com/tablestore/tablestore/internal/entityenc"
)

// Sealer holds the keys and the encrypted properties of each table.
type Sealer struct {
	current string
	aeads   map[string]cipher.AEAD
	tables  map[string][]string // by lowercase name, sorted
	plain   bool
}

// New returns the Sealer of keys (each 32 bytes, checked by the caller)
// that seals under current the properties tables names (matched
// case-insensitively by table); plain reads an unsealed value as it is.
func New(keys map[string][]byte, current string, tables map[string][]string, plain bool) (*Sealer, error) {
	s := &Sealer{current: current, aeads: map[string]cipher.AEAD{}, tables: map[string][]string{}, plain: plain}
	for id, k := range keys {
		block, err := aes.NewCipher(k)
		if err != nil {
			return nil, err
		}
		if s.aeads[id], err = cipher.NewGCM(block); err != nil {
			return nil, err
		}
	}
	for table, names := range tables {
		key := strings.ToLower(table)
		s.tables[key] = append(s.tables[key], names...)
		slices.Sort(s.tables[key])
		s.tables[key] = slices.Compact(s.tables[key])
	}
	return s, nil
}

// Table returns drv, or for a table with encrypted properties a driver
// table that seals and opens them; drv for a nil s.
func (s *Sealer) Table(name string, drv driver.Table) driver.Table {
	if s == nil {
		return drv
	}
	props := s.tables[strings.ToLower(name)]
	if len(props) == 0 {
		return drv
	}
	return &sealedTable{Table: drv, s: s, name: name, props: props}
}

// sealedTable seals the encrypted properties of every entity written and
// opens them in every entity read.
type sealedTable struct {
	driver.Table
	s     *Sealer
	name  string
	props []string // sorted
}

func (t *sealedTable) encrypted(name string) bool {
	_, ok := slices.BinarySearch(t.props, name)
	return ok
}

const sealVersion = 0xE1

// aad is the associated data of a sealed value.
func sealAAD(keyID, pk, rk, name string) []byte {
	b := []byte("tablestore property v1\x00")
	for _, s := range []string{keyID, pk, rk, name} {
		b = binary.BigEndian.AppendUint32(b, uint32(len(s)))
		b = append(b, s...)
	}
	return b
}

// seal encrypts v, the value of property name of entity (pk, rk).
func (s *Sealer) seal(pk, rk, name string, v edm.Value) (edm.Value, error) {
	aead := s.aeads[s.current]
	plain := make([]byte, 0, 17+len(v.Bytes))
	plain = append(plain, byte(v.Type))
	plain = binary.BigEndian.AppendUint64(plain, uint64(v.Int))
	plain = binary.BigEndian.AppendUint64(plain, math.Float64bits(v.Float))
	plain = append(plain, v.Bytes...)
	out := make([]byte, 0, 2+len(s.current)+aead.NonceSize()+len(plain)+aead.Overhead())
	out = append(out, sealVersion, byte(len(s.current)))
	out = append(out, s.current...)
	nonce := out[len(out) : len(out)+aead.NonceSize()]
	if _, err := rand.Read(nonce); err != nil {
		return edm.Value{}, err
	}
	out = out[:len(out)+aead.NonceSize()]
	out = aead.Seal(out, nonce, plain, sealAAD(s.current, pk, rk, name))
	return edm.Value{Type: edm.TypeBinary, Bytes: out}, nil
}

// open decrypts a sealed value; a value that is not sealed is returned
// as it is when AllowPlaintext is set.
func (s *Sealer) open(table, pk, rk, name string, v edm.Value) (edm.Value, error) {
	where := fmt.Sprintf("property %q of entity (%s, %s) in table %s", name, entityenc.QuoteShort(pk), entityenc.QuoteShort(rk), table)
	b := v.Bytes
	if v.Type != edm.TypeBinary || len(b) < 2 || b[0] != sealVersion || len(b) < 2+int(b[1]) {
		if s.plain {
			return v, nil
		}
		return edm.Value{}, &driver.CorruptError{Op: "decrypt of " + where, Err: fmt.Errorf("the value is not encrypted")}
	}
	keyID := string(b[2 : 2+int(b[1])])
	aead, ok := s.aeads[keyID]
	if !ok {
		return edm.Value{}, &driver.EncryptionKeyError{KeyID: keyID, File: where}
	}
	rest := b[2+int(b[1]):]
	if len(rest) < aead.NonceSize() {
		return edm.Value{}, &driver.CorruptError{Op: "decrypt of " + where, Err: fmt.Errorf("the sealed value is truncated")}
	}
	plain, err := aead.Open(nil, rest[:aead.NonceSize()], rest[aead.NonceSize():], sealAAD(keyID, pk, rk, name))
	if err != nil || len(plain) < 17 {
		return edm.Value{}, &driver.CorruptError{Op: "decrypt of " + where, Err: fmt.Errorf("the sealed value fails authentication (altered, or moved from another entity or property)")}
	}
	out := edm.Value{Type: edm.Type(plain[0]), Int: int64(binary.BigEndian.Uint64(plain[1:])), Float: math.Float64frombits(binary.BigEndian.Uint64(plain[9:]))}
	if len(plain) > 17 {
		out.Bytes = plain[17:]
	}
	return out, nil
}

// Commit seals the encrypted properties of each action.
func (t *sealedTable) Commit(ctx context.Context, actions []driver.Action) (driver.CommitResult, error) {
	out, err := t.seal(actions)
	if err != nil {
		return driver.CommitResult{}, err
	}
	return t.Table.Commit(ctx, out)
}

// CommitWith is Commit with opts, when the driver takes them.
func (t *sealedTable) CommitWith(ctx context.Context, actions []driver.Action, opts driver.CommitOptions) (driver.CommitResult, error) {
	oc, ok := t.Table.(driver.OptionCommitter)
	if !ok {
		return driver.CommitResult{}, &driver.Error{Code: edm.CodeNotImplemented, Message: "this store cannot give a transaction's entities distinct Timestamps"}
	}
	out, err := t.seal(actions)
	if err != nil {
		return driver.CommitResult{}, err
	}
	return oc.CommitWith(ctx, out, opts)
}

// seal returns a copy of actions with the encrypted properties sealed.
func (t *sealedTable) seal(actions []driver.Action) ([]driver.Action, error) {
	out := make([]driver.Action, len(actions))
	for i, a := range actions {
		out[i] = a
		if a.Type == driver.ActionDelete {
			continue
		}
		props := a.Properties
		if a.Record != nil {
			var err error
			if props, err = driver.Record(a.Record).Properties(); err != nil {
				return nil, err
			}
		} else {
			props = slices.Clone(props)
		}
		for j := range props {
			if !t.encrypted(props[j].Name) {
				continue
			}
			v, err := t.s.seal(a.PartitionKey, a.RowKey, props[j].Name, props[j].Value)
			if err != nil {
				return nil, err
			}
			props[j].Value = v
		}
		out[i].Properties, out[i].Record = props, nil
	}
	return out, nil
}

// openRow returns r with its encrypted properties opened.
func (t *sealedTable) openRow(r driver.Row) (driver.Row, error) {
	ts, err := r.Record.Timestamp()
	if err != nil {
		return r, err
	}
	props, err := r.Record.Properties()
	if err != nil {
		return r, err
	}
	changed := false
	for j := range props {
		if !t.encrypted(props[j].Name) {
			continue
		}
		if props[j].Value, err = t.s.open(t.name, r.PartitionKey, r.RowKey, props[j].Name, props[j].Value); err != nil {
			return r, err
		}
		changed = true
	}
	if !changed {
		return r, nil
	}
	rec, err := driver.Encode(nil, ts, props)
	if err != nil {
		return r, err
	}
	r.Record = rec
	return r, nil
}

// Get opens the encrypted properties of the entity read.
func (t *sealedTable) Get(ctx context.Context, pk, rk string, sel []string) (driver.Row, error) {
	r, err := t.Table.Get(ctx, pk, rk, sel)
	if err != nil {
		return r, err
	}
	return t.openRow(r)
}

// QueryPage refuses a filter on an encrypted property, and opens the
// encrypted properties of every entity emitted.
func (t *sealedTable) QueryPage(ctx context.Context, q *driver.QueryRequest, emit func(driver.Row) error) (driver.PageResult, error) {
	return t.query(ctx, q, emit, t.Table.QueryPage)
}

// QueryPageReverse is QueryPage in reverse order, when the driver reads
// in reverse: the order is by keys, which are not sealed.
func (t *sealedTable) QueryPageReverse(ctx context.Context, q *driver.QueryRequest, emit func(driver.Row) error) (driver.PageResult, error) {
	r, ok := t.Table.(driver.ReverseQuerier)
	if !ok {
		return driver.PageResult{}, &driver.Error{Code: edm.CodeNotImplemented, Message: "this store cannot read a table in reverse"}
	}
	return t.query(ctx, q, emit, r.QueryPageReverse)
}

func (t *sealedTable) query(ctx context.Context, q *driver.QueryRequest, emit func(driver.Row) error,
	read func(context.Context, *driver.QueryRequest, func(driver.Row) error) (driver.PageResult, error)) (driver.PageResult, error) {
	if q.Filter != nil {
		for _, name := range filter.NewFilter(q.Filter).Names {
			if t.encrypted(name) {
				return driver.PageResult{}, &driver.Error{Code: edm.CodeInvalidInput,
					Message: fmt.Sprintf("$filter names %q, an encrypted property of table %s: the store holds only its ciphertext, so a filter on it cannot be answered", name, t.name)}
			}
		}
	}
	return read(ctx, q, func(r driver.Row) error {
		r, err := t.openRow(r)
		if err != nil {
			return err
		}
		return emit(r)
	})
}

// DeleteRange deletes by keys, which are not sealed, when the driver
// can.
func (t *sealedTable) DeleteRange(ctx context.Context, pk, fromRowKey, toRowKey string) (driver.DeleteRangeResult, error) {
	d, ok := t.Table.(driver.RangeDeleter)
	if !ok {
		return driver.DeleteRangeResult{}, &driver.Error{Code: edm.CodeNotImplemented, Message: "this store cannot delete a range of a partition"}
	}
	return d.DeleteRange(ctx, pk, fromRowKey, toRowKey)
}

// indexer returns the driver's Indexer, or NotImplemented.
func (t *sealedTable) indexer() (driver.Indexer, error) {
	d, ok := t.Table.(driver.Indexer)
	if !ok {
		return nil, &driver.Error{Code: edm.CodeNotImplemented, Message: "this store has no secondary indexes"}
	}
	return d, nil
}

// CreateIndex refuses an index on an encrypted property with
// InvalidInput naming it (the store could order only its ciphertext);
// an index on the other properties is the driver's.
func (t *sealedTable) CreateIndex(ctx context.Context, spec driver.IndexSpec) error {
	for _, name := range spec.Properties {
		if t.encrypted(name) {
			return &driver.Error{Code: edm.CodeInvalidInput,
				Message: fmt.Sprintf("index %s names %q, an encrypted property of table %s: the store holds only its ciphertext, so it cannot index it", spec.Name, name, t.name)}
		}
	}
	d, err := t.indexer()
	if err != nil {
		return err
	}
	return d.CreateIndex(ctx, spec)
}

// DropIndex is the driver's.
func (t *sealedTable) DropIndex(ctx context.Context, name string) error {
	d, err := t.indexer()
	if err != nil {
		return err
	}
	return d.DropIndex(ctx, name)
}

// Indexes is the driver's.
func (t *sealedTable) Indexes(ctx context.Context) ([]driver.IndexStatus, error) {
	d, err := t.indexer()
	if err != nil {
		return nil, err
	}
	return d.Indexes(ctx)
}

// IndexSizes is the driver's, or no estimates.
func (t *sealedTable) IndexSizes(ctx context.Context) (map[string]driver.TableStats, error) {
	if d, ok := t.Table.(driver.IndexSizer); ok {
		return d.IndexSizes(ctx)
	}
	return nil, nil
}

// QueryIndexPage refuses a filter on an encrypted property, as
// QueryPage, and opens the encrypted properties of every entity emitted.
func (t *sealedTable) QueryIndexPage(ctx context.Context, q *driver.IndexQueryRequest, emit func(driver.Row) error) (driver.IndexPageResult, error) {
	d, err := t.indexer()
	if err != nil {
		return driver.IndexPageResult{}, err
	}
	var res driver.IndexPageResult
	_, err = t.query(ctx, q.Query, emit, func(ctx context.Context, _ *driver.QueryRequest, emit func(driver.Row) error) (driver.PageResult, error) {
		var err error
		res, err = d.QueryIndexPage(ctx, q, emit)
		return res.PageResult, err
	})
	return res, err
}
