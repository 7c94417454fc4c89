package main

import (
	"fmt"
	"math"
	"strings"
)

// commas formats v rounded to an integer with thousands separators.
func commas(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "-"
	}
	s := fmt.Sprintf("%.0f", math.Abs(v))
	var b strings.Builder
	if v < 0 && s != "0" {
		b.WriteByte('-')
	}
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// formatFigure formats a measured figure for the table: large values with
// separators, small ones with three significant digits.
func formatFigure(v float64) string {
	switch {
	case math.IsNaN(v):
		return "n/a"
	case math.Abs(v) >= 100:
		return commas(v)
	default:
		return fmt.Sprintf("%.3g", v)
	}
}

// formatRatio formats a ratio with two decimals ("n/a" when missing).
func formatRatio(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "n/a"
	}
	if v >= 100 {
		return fmt.Sprintf("%.0fx", v)
	}
	return fmt.Sprintf("%.2fx", v)
}
