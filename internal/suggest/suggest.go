// Package suggest finds the name a misspelled one most likely meant, for
// "did you mean" in error messages.
package suggest

import (
	"strings"
	"unicode/utf8"
)

// Nearest returns the candidate closest to name by edit distance
// (adjacent swaps count as one edit, case is ignored), when it is close
// enough to be a typo: at most 1 edit for names up to 4 runes, 2 up to 8,
// 3 beyond. "" when none is, or name is a candidate.
func Nearest(name string, candidates []string) string {
	limit := 3
	switch n := utf8.RuneCountInString(name); {
	case n <= 4:
		limit = 1
	case n <= 8:
		limit = 2
	}
	best, bestDist := "", limit+1
	for _, c := range candidates {
		if c == name {
			return ""
		}
		if d := editDistance(strings.ToLower(name), strings.ToLower(c)); d < bestDist {
			best, bestDist = c, d
		}
	}
	return best
}

// editDistance is the optimal string alignment distance between a and b:
// insertions, deletions, substitutions and swaps of adjacent runes.
func editDistance(a, b string) int {
	x, y := []rune(a), []rune(b)
	prev2 := make([]int, len(y)+1)
	prev := make([]int, len(y)+1)
	cur := make([]int, len(y)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(x); i++ {
		cur[0] = i
		for j := 1; j <= len(y); j++ {
			cost := 1
			if x[i-1] == y[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && x[i-1] == y[j-2] && x[i-2] == y[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(y)]
}
