package plan

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Key is a position in a table's (PartitionKey, RowKey) order. Positions
// need not be keys of stored entities, or even valid keys, but they never
// contain bytes below 0x20, so that comparing (PartitionKey, RowKey) pairs
// agrees with comparing the stored keys.
type Key struct {
	PartitionKey string
	RowKey       string
}

// Compare orders positions by PartitionKey, then RowKey, byte-wise. It
// returns -1, 0 or +1.
func Compare(a, b Key) int {
	if c := strings.Compare(a.PartitionKey, b.PartitionKey); c != 0 {
		return c
	}
	return strings.Compare(a.RowKey, b.RowKey)
}

// Successor returns the smallest string greater than s that a key can hold,
// given that keys hold no byte below 0x20: s followed by a space.
func Successor(s string) string { return s + " " }

// PartitionEnd returns the first position after every key of partition pk.
func PartitionEnd(pk string) Key { return Key{PartitionKey: Successor(pk)} }

// KeyRange is the half-open range [Start, End) of positions; when Unbounded
// is set it runs to the end of the table and End is unused.
type KeyRange struct {
	Start     Key
	End       Key
	Unbounded bool
}

// Point reports whether r holds exactly one position, and which.
func (r KeyRange) Point() (Key, bool) {
	if r.Unbounded || r.Start.PartitionKey != r.End.PartitionKey ||
		r.End.RowKey != Successor(r.Start.RowKey) {
		return Key{}, false
	}
	return r.Start, true
}

// Partition reports whether r lies inside a single partition, and which.
func (r KeyRange) Partition() (string, bool) {
	pk := r.Start.PartitionKey
	if r.Unbounded {
		return "", false
	}
	if r.End.PartitionKey == pk || r.End == PartitionEnd(pk) {
		return pk, true
	}
	return "", false
}

// Contains reports whether position k lies in r.
func (r KeyRange) Contains(k Key) bool {
	return Compare(r.Start, k) <= 0 && (r.Unbounded || Compare(k, r.End) < 0)
}

// empty reports whether r holds no position.
func (r KeyRange) empty() bool {
	return !r.Unbounded && Compare(r.Start, r.End) >= 0
}

// kind classifies a single range.
func (r KeyRange) kind() Kind {
	if _, ok := r.Point(); ok {
		return Point
	}
	pk, ok := r.Partition()
	if !ok {
		return TableScan
	}
	if r.Start.RowKey == "" && r.End == PartitionEnd(pk) {
		return PartitionScan
	}
	return Range
}

// String describes r as conditions on the keys that hold exactly for the
// positions in r, with <, <=, >= and > (never OData's operators, so a range
// is not mistaken for a filter):
//
//	PartitionKey = 'p', RowKey = 'r'                 one position
//	PartitionKey = 'p', 'a' <= RowKey < 'b'          inside one partition
//	PartitionKey = 'p'                               a whole partition
//	(PartitionKey, RowKey) >= ('a', 'm'), PartitionKey < 'c'
//	all                                              the whole table
//
// A bound that is a Successor prints as the inclusive or exclusive bound on
// the original string: [Successor(a), ...) prints as "> 'a'" and
// [..., Successor(b)) as "<= 'b'". Strings print in OData single quotes, a quote
// inside doubled; strings holding invalid UTF-8 or unprintable characters
// print Go-quoted.
func (r KeyRange) String() string {
	if k, ok := r.Point(); ok {
		return "PartitionKey = " + quote(k.PartitionKey) + ", RowKey = " + quote(k.RowKey)
	}
	if pk, ok := r.Partition(); ok {
		s := "PartitionKey = " + quote(pk)
		lo := r.Start.RowKey
		hasLo := lo != ""
		hi := r.End.RowKey
		hasHi := r.End.PartitionKey == pk
		switch {
		case hasLo && hasHi:
			return s + ", " + quote(trimSucc(lo)) + lowerOp(lo, true) + "RowKey" + upperOp(hi) + quote(trimSucc(hi))
		case hasLo:
			return s + ", RowKey" + lowerOp(lo, false) + quote(trimSucc(lo))
		case hasHi:
			return s + ", RowKey" + upperOp(hi) + quote(trimSucc(hi))
		}
		return s
	}
	var parts []string
	if r.Start != (Key{}) {
		parts = append(parts, bound(r.Start, true))
	}
	if !r.Unbounded {
		parts = append(parts, bound(r.End, false))
	}
	if len(parts) == 0 {
		return "all"
	}
	return strings.Join(parts, ", ")
}

// bound prints one end of a range that crosses partitions.
func bound(k Key, lower bool) string {
	op := upperOp
	if lower {
		op = func(s string) string { return lowerOp(s, false) }
	}
	if k.RowKey == "" {
		return "PartitionKey" + op(k.PartitionKey) + quote(trimSucc(k.PartitionKey))
	}
	return "(PartitionKey, RowKey)" + op(k.RowKey) + "(" + quote(k.PartitionKey) + ", " + quote(trimSucc(k.RowKey)) + ")"
}

// lowerOp returns the operator for an inclusive lower bound s; flipped
// writes it for the form `'a' <= X`.
func lowerOp(s string, flipped bool) string {
	succ := strings.HasSuffix(s, " ")
	switch {
	case flipped && succ:
		return " < "
	case flipped:
		return " <= "
	case succ:
		return " > "
	}
	return " >= "
}

// upperOp returns the operator for an exclusive upper bound s.
func upperOp(s string) string {
	if strings.HasSuffix(s, " ") {
		return " <= "
	}
	return " < "
}

func trimSucc(s string) string { return strings.TrimSuffix(s, " ") }

// quote prints s as an OData string literal when it is printable UTF-8,
// and Go-quoted otherwise.
func quote(s string) string {
	if !utf8.ValidString(s) || strings.IndexFunc(s, func(r rune) bool { return !unicode.IsPrint(r) && r != ' ' }) >= 0 {
		return strconv.Quote(s)
	}
	return "'" + strings.ReplaceAll(s, "'", "''") + "'"
}
