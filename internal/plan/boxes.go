package plan

// The planner reasons about sets of keys as unions of boxes: a box is the
// set of keys whose PartitionKey lies in one interval and whose RowKey lies
// in another. Boxes are closed under intersection, so `and` is a pairwise
// product and `or` a concatenation, and a set of boxes maps to key ranges
// at the end.

// interval is the half-open set of strings [lo, hi); "" is the smallest
// string, so lo == "" means no lower bound, and hasHi false means no upper
// bound. Bounds never hold bytes below 0x20.
type interval struct {
	lo    string
	hi    string
	hasHi bool
}

func (a interval) empty() bool { return a.hasHi && a.hi <= a.lo }

func (a interval) full() bool { return a.lo == "" && !a.hasHi }

// point reports whether a holds exactly one key string.
func (a interval) point() bool { return a.hasHi && a.hi == Successor(a.lo) }

func (a interval) contains(b interval) bool {
	if b.lo < a.lo {
		return false
	}
	return !a.hasHi || (b.hasHi && b.hi <= a.hi)
}

func (a interval) intersect(b interval) interval {
	r := a
	if b.lo > r.lo {
		r.lo = b.lo
	}
	if b.hasHi && (!r.hasHi || b.hi < r.hi) {
		r.hi, r.hasHi = b.hi, true
	}
	return r
}

// hull returns the smallest interval holding both a and b.
func (a interval) hull(b interval) interval {
	r := a
	if b.lo < r.lo {
		r.lo = b.lo
	}
	if !b.hasHi || (r.hasHi && b.hi > r.hi) {
		r.hi, r.hasHi = b.hi, b.hasHi
	}
	return r
}

// box is the set of keys with PartitionKey in pk and RowKey in rk.
type box struct{ pk, rk interval }

func (b box) empty() bool { return b.pk.empty() || b.rk.empty() }

func (b box) intersect(c box) box {
	return box{pk: b.pk.intersect(c.pk), rk: b.rk.intersect(c.rk)}
}

// toRange returns the smallest key range holding b, and whether the range
// holds exactly b's keys. A box whose PartitionKey is one string maps
// exactly; a box spanning partitions maps exactly only when it does not
// constrain RowKey, since its RowKey bounds cannot be expressed in between.
// REQUIRES: !b.empty().
func (b box) toRange() (KeyRange, bool) {
	if b.pk.point() {
		p := b.pk.lo
		r := KeyRange{Start: Key{PartitionKey: p, RowKey: b.rk.lo}, End: PartitionEnd(p)}
		if b.rk.hasHi {
			r.End = Key{PartitionKey: p, RowKey: b.rk.hi}
		}
		return r, true
	}
	// Keys of the first partition still need RowKey >= rk.lo.
	r := KeyRange{Start: Key{PartitionKey: b.pk.lo, RowKey: b.rk.lo}, Unbounded: !b.pk.hasHi}
	if b.pk.hasHi {
		r.End = Key{PartitionKey: b.pk.hi}
	}
	return r, b.rk.full()
}

// holds reports whether every key of r lies in b.
func (b box) holds(r KeyRange) bool {
	if b.rk.full() {
		whole, _ := b.toRange()
		return Compare(whole.Start, r.Start) <= 0 &&
			(whole.Unbounded || (!r.Unbounded && Compare(r.End, whole.End) <= 0))
	}
	p, ok := r.Partition()
	if !ok || !b.pk.contains(interval{lo: p, hi: Successor(p), hasHi: true}) {
		return false
	}
	span := interval{lo: r.Start.RowKey}
	if r.End.PartitionKey == p {
		span.hi, span.hasHi = r.End.RowKey, true
	}
	return b.rk.contains(span)
}

// boxSet is a union of boxes. A nil or empty list is the empty set.
type boxSet []box

var fullSet = boxSet{{}}

// hull returns a one-box set holding every box of s.
func (s boxSet) hull() boxSet {
	if len(s) == 0 {
		return s
	}
	h := s[0]
	for _, b := range s[1:] {
		h.pk = h.pk.hull(b.pk)
		h.rk = h.rk.hull(b.rk)
	}
	return boxSet{h}
}

// intersect returns the pairwise intersections of a and b, dropping empty
// boxes. When there would be more than MaxRanges boxes the result is their
// hull and exact is false.
func (s boxSet) intersect(t boxSet) (r boxSet, exact bool) {
	for _, a := range s {
		for _, b := range t {
			if c := a.intersect(b); !c.empty() {
				r = append(r, c)
			}
		}
	}
	if len(r) > MaxRanges {
		return r.hull(), false
	}
	return r, true
}

// union returns a and b together, as a hull past MaxRanges boxes.
func (s boxSet) union(t boxSet) (r boxSet, exact bool) {
	r = append(append(boxSet(nil), s...), t...)
	if len(r) > MaxRanges {
		return r.hull(), false
	}
	return r, true
}
