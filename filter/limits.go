package filter

// Limits bound the size of a filter. Exceeding one is an InvalidInput
// error. A zero field means no limit.
type Limits struct {
	MaxLength      int // bytes of filter text
	MaxDepth       int // nesting of parentheses and not
	MaxComparisons int // comparisons, bare property names included
}

// DefaultLimits are the limits used when none are given.
var DefaultLimits = Limits{MaxLength: 32 << 10, MaxDepth: 64, MaxComparisons: 200}
