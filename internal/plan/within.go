package plan

// Within returns a copy of p reading only the part of its ranges inside
// r; its Kind is Empty when nothing is left. The residual is unchanged.
func (p *Plan) Within(r KeyRange) *Plan {
	out := &Plan{Kind: p.Kind, Residual: p.Residual}
	for _, x := range p.Ranges {
		if Compare(x.Start, r.Start) < 0 {
			x.Start = r.Start
		}
		if !r.Unbounded && (x.Unbounded || Compare(r.End, x.End) < 0) {
			x.End, x.Unbounded = r.End, false
		}
		if !x.Empty() {
			out.Ranges = append(out.Ranges, x)
		}
	}
	if len(out.Ranges) == 0 {
		out.Kind = Empty
	}
	return out
}
