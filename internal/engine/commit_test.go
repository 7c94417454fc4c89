package engine

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tablestore/tablestore/filter"
	"github.com/tablestore/tablestore/internal/codec"
)

func TestMergeProperties(t *testing.T) {
	p := func(name string, n int64) codec.Property {
		return codec.Property{Name: name, Value: filter.Value{Type: filter.TypeInt64, Int: n}}
	}
	tests := []struct {
		name      string
		old, upd  []codec.Property
		wantNames string
		wantSum   int64
	}{
		{"both empty", nil, nil, "", 0},
		{"only old", []codec.Property{p("A", 1), p("C", 3)}, nil, "A C", 4},
		{"only upd", nil, []codec.Property{p("B", 2)}, "B", 2},
		{"interleaved", []codec.Property{p("A", 1), p("C", 3)}, []codec.Property{p("B", 20), p("D", 40)}, "A B C D", 64},
		{"replace", []codec.Property{p("A", 1), p("B", 2), p("C", 3)}, []codec.Property{p("B", 200)}, "A B C", 204},
		{"replace all", []codec.Property{p("A", 1)}, []codec.Property{p("A", 100), p("Z", 5)}, "A Z", 105},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := mergeProperties(tc.old, tc.upd)
			var names []string
			var sum int64
			for _, q := range got {
				names = append(names, q.Name)
				sum += q.Value.Int
			}
			require.Equal(t, tc.wantNames, strings.Join(names, " "))
			require.Equal(t, tc.wantSum, sum)
		})
	}
}
