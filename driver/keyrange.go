package driver

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Key is a position in a table's (PartitionKey, RowKey) order, the order
// in which queries return entities. Positions need not be keys of stored
// entities, or even valid keys, but they never contain bytes below 0x20
// (Azure forbids control characters in keys), so that a driver may store
// an entity under PartitionKey, a 0x00 byte, and RowKey, and compare
// stored keys byte-wise in this same order.
type Key struct {
	PartitionKey string
	RowKey       string
}

// Compare orders k and o by PartitionKey, then RowKey, byte-wise (the
// order of their UTF-8, which is code-point order). It returns -1, 0 or
// +1.
func (k Key) Compare(o Key) int {
	if c := strings.Compare(k.PartitionKey, o.PartitionKey); c != 0 {
		return c
	}
	return strings.Compare(k.RowKey, o.RowKey)
}

// Successor returns the smallest string greater than s that a key can
// hold, given that keys hold no byte below 0x20: s followed by a space.
// So the range of RowKeys greater than "x" starts at "x ", and the range
// holding exactly the position (p, r) is [(p, r), (p, r+" ")).
func Successor(s string) string { return s + " " }

// PartitionEnd returns the first position after every key of partition
// pk: (Successor(pk), "").
func PartitionEnd(pk string) Key { return Key{PartitionKey: Successor(pk)} }

// KeyRange is the half-open range [Start, End) of positions; when
// Unbounded is set it runs to the end of the table and End is unused:
// KeyRange{Unbounded: true} is the whole table.
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
	return r.Start.Compare(k) <= 0 && (r.Unbounded || k.Compare(r.End) < 0)
}

// Empty reports whether r holds no position.
func (r KeyRange) Empty() bool {
	return !r.Unbounded && r.Start.Compare(r.End) >= 0
}

// RangesFrom returns the part of ranges still to read when a forward read
// resumes at position next: ranges wholly before next are dropped and the
// range holding next starts at it. ranges must be sorted and
// non-overlapping, as QueryRequest.Ranges are. The result is a new slice;
// ranges is not modified.
func RangesFrom(ranges []KeyRange, next Key) []KeyRange {
	out := make([]KeyRange, 0, len(ranges))
	for _, r := range ranges {
		if !r.Unbounded && r.End.Compare(next) <= 0 {
			continue
		}
		if r.Start.Compare(next) < 0 {
			r.Start = next
		}
		out = append(out, r)
	}
	return out
}

// RangesUpto returns the part of ranges still to read when a reverse read
// (ReverseQuerier) resumes at position next: ranges wholly after next are
// dropped and the range holding next ends just after it, so next is the
// first position read. The result stays in ascending order; a reverse
// reader takes the ranges last first. ranges must be sorted and
// non-overlapping. The result is a new slice; ranges is not modified.
func RangesUpto(ranges []KeyRange, next Key) []KeyRange {
	end := Key{PartitionKey: next.PartitionKey, RowKey: Successor(next.RowKey)}
	out := make([]KeyRange, 0, len(ranges))
	for _, r := range ranges {
		if r.Start.Compare(end) >= 0 {
			continue
		}
		if r.Unbounded || r.End.Compare(end) > 0 {
			r.End, r.Unbounded = end, false
		}
		out = append(out, r)
	}
	return out
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
