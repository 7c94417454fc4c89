package engine

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestSplitUsage(t *testing.T) {
	for _, c := range []struct {
		name              string
		head, rest, whole uint64
		h, r              float64
	}{
		{"boundary blocks counted twice", 100, 900, 950, 75, 875},
		{"exact parts", 100, 900, 1000, 100, 900},
		{"parts measured after the span grew", 100, 900, 1100, 150, 950},
		{"rest measured larger than the whole", 100, 900, 700, 100, 900},
		{"head measured larger than the whole", 1000, 0, 500, 1000, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			h, r := splitUsage(c.head, c.rest, c.whole)
			require.Equal(t, c.h, h)
			require.Equal(t, c.r, r)
		})
	}
}
