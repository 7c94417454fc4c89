package main

import (
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"math"
	"os"

	"golang.org/x/image/font"
	"golang.org/x/image/font/basicfont"
	"golang.org/x/image/math/fixed"
)

// The chart shows, for every figure, tablestore's speed relative to each
// comparator on a log scale centred on 1: bars to the right mean
// tablestore is faster, to the left slower. ns/op figures are inverted
// (comparator time / tablestore time) so that right is always better.

const (
	chartWidth  = 1120
	labelWidth  = 360
	plotLeft    = labelWidth + 20
	plotRight   = chartWidth - 60
	headerH     = 92
	barH        = 13
	rowGap      = 12
	footerH     = 58
	chartMinLog = -2 // 0.01x
	chartMaxLog = 2  // 100x
)

var (
	colBackground = color.RGBA{255, 255, 255, 255}
	colText       = color.RGBA{20, 20, 20, 255}
	colGrid       = color.RGBA{215, 215, 215, 255}
	colOne        = color.RGBA{90, 90, 90, 255}
	colPebble     = color.RGBA{68, 114, 196, 255}
	colPebbleMaps = color.RGBA{112, 48, 160, 255}
	colSQLite     = color.RGBA{237, 125, 49, 255}
	colTarget     = color.RGBA{112, 173, 71, 255}
	colMiss       = color.RGBA{192, 0, 0, 255}
)

// chartSide is a comparator drawn as a bar: its side name, legend text
// and colour.
type chartSide struct {
	side, legend string
	col          color.RGBA
}

// chartSides are the comparators of the main run's chart, in order.
var chartSides = []chartSide{
	{sidePebble, "vs raw Pebble", colPebble},
	{sidePebbleMaps, "vs raw Pebble into maps", colPebbleMaps},
	{sideSQLite, "vs SQLite", colSQLite},
}

// chartTarget is one target drawn as a bar: tablestore's speed relative
// to the reference, and the goal on the same scale.
type chartTarget struct {
	label       string
	speed, goal float64
	pass        bool
}

// chartTargets returns the ratio targets (those in x) on the speed scale:
// time ratios are inverted like ns/op rows.
func chartTargets(ts []target) []chartTarget {
	var out []chartTarget
	for _, t := range ts {
		if t.Unit != "x" {
			continue
		}
		c := chartTarget{label: "target: " + t.Name, speed: t.Value, goal: t.Limit, pass: t.Pass}
		if t.AtMost {
			c.speed, c.goal = 1/t.Value, 1/t.Limit
		}
		out = append(out, c)
	}
	return out
}

// speedRatio returns tablestore's speed over the comparator's for row x:
// the plain ratio for per-second figures, its inverse for ns/op figures.
func speedRatio(x *row, side string) float64 {
	r := x.ratio(side)
	if !x.HigherIsBetter {
		r = 1 / r
	}
	return r
}

func chartX(v float64) int {
	l := math.Log10(v)
	l = math.Max(chartMinLog, math.Min(chartMaxLog, l))
	return plotLeft + int(math.Round((l-chartMinLog)/(chartMaxLog-chartMinLog)*float64(plotRight-plotLeft)))
}

// writeChart draws the ratio chart of r to path as a PNG.
func writeChart(path string, r *results) error {
	return writePNG(path, drawChart(r, fmt.Sprintf("tablestore speed relative to raw Pebble, raw Pebble into maps and SQLite (scale %s, %s entities)",
		r.Scale.Name, commas(float64(r.Scale.Entities))), chartSides))
}

// writePNG writes img to path.
func writePNG(path string, img image.Image) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := png.Encode(f, img); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// drawChart draws the rows of r (and its ratio targets) as bars of
// tablestore's speed relative to each of sides, under title.
func drawChart(r *results, title string, sides []chartSide) *image.RGBA {
	rowH := len(sides)*barH + rowGap
	targets := chartTargets(r.Targets)
	targetH := barH + rowGap
	height := headerH + len(r.Rows)*rowH + len(targets)*targetH + footerH
	img := image.NewRGBA(image.Rect(0, 0, chartWidth, height))
	draw.Draw(img, img.Bounds(), image.NewUniform(colBackground), image.Point{}, draw.Src)

	text(img, 12, 20, colText, title)
	text(img, 12, 38, colText, "bar = tablestore speed / comparator speed, log scale; right of 1x: tablestore faster, left: slower")
	text(img, 12, 56, colText, "(for ns/op figures the ratio is inverted so that right is always better)")
	lx := plotLeft
	for _, c := range sides {
		fill(img, lx, 66, 12, 10, c.col)
		text(img, lx+18, 76, colText, c.legend)
		lx += 18 + 7*len(c.legend) + 20
	}
	if len(targets) > 0 {
		fill(img, lx, 66, 12, 10, colTarget)
		text(img, lx+18, 76, colText, "target (red tick: goal)")
	}

	top, bottom := headerH, headerH+len(r.Rows)*rowH+len(targets)*targetH
	for l := chartMinLog; l <= chartMaxLog; l++ {
		x := chartX(math.Pow(10, float64(l)))
		c := colGrid
		if l == 0 {
			c = colOne
		}
		fill(img, x, top-4, 1, bottom-top+8, c)
		label := fmt.Sprintf("%gx", math.Pow(10, float64(l)))
		text(img, x-len(label)*7/2, bottom+20, colText, label)
	}
	text(img, plotLeft, bottom+42, colText, "<- tablestore slower")
	text(img, plotRight-19*7, bottom+42, colText, "tablestore faster ->")

	one := chartX(1)
	for i, x := range r.Rows {
		y := top + i*rowH
		label := x.Label
		if len(label) > labelWidth/7-1 {
			label = label[:labelWidth/7-2] + "."
		}
		text(img, 12, y+barH+4, colText, label)
		for j, c := range sides {
			by := y + j*barH
			v := speedRatio(x, c.side)
			col := c.col
			if math.IsNaN(v) || math.IsInf(v, 0) || v <= 0 {
				text(img, one+6, by+barH-2, colText, "n/a")
				continue
			}
			bx := chartX(v)
			lo, hi := min(one, bx), max(one, bx)
			fill(img, lo, by+1, max(hi-lo, 1), barH-2, col)
			s := fmt.Sprintf("%.2fx", v)
			if v >= 100 {
				s = fmt.Sprintf("%.0fx", v)
			}
			if bx >= one {
				text(img, min(hi+4, chartWidth-len(s)*7-2), by+barH-2, colText, s)
			} else {
				text(img, max(lo-4-len(s)*7, plotLeft-len(s)*7), by+barH-2, colText, s)
			}
		}
	}
	for i, t := range targets {
		y := top + len(r.Rows)*rowH + i*targetH
		label := t.label
		if len(label) > labelWidth/7-1 {
			label = label[:labelWidth/7-2] + "."
		}
		text(img, 12, y+barH-2, colText, label)
		if math.IsNaN(t.speed) || math.IsInf(t.speed, 0) || t.speed <= 0 {
			text(img, one+6, y+barH-2, colText, "n/a")
			continue
		}
		bx := chartX(t.speed)
		lo, hi := min(one, bx), max(one, bx)
		fill(img, lo, y+1, max(hi-lo, 1), barH-2, colTarget)
		fill(img, chartX(t.goal)-1, y-2, 3, barH+4, colMiss)
		s := fmt.Sprintf("%.2fx", t.speed)
		if !t.pass {
			s += " miss"
		}
		if bx >= one {
			text(img, min(max(hi, chartX(t.goal))+8, chartWidth-len(s)*7-2), y+barH-2, colText, s)
		} else {
			text(img, max(min(lo, chartX(t.goal))-8-len(s)*7, plotLeft-len(s)*7), y+barH-2, colText, s)
		}
	}
	return img
}

func fill(img *image.RGBA, x, y, w, h int, c color.Color) {
	draw.Draw(img, image.Rect(x, y, x+w, y+h), image.NewUniform(c), image.Point{}, draw.Src)
}

// text draws s with its baseline at (x, y) in the 7x13 fixed font.
func text(img *image.RGBA, x, y int, c color.Color, s string) {
	d := font.Drawer{Dst: img, Src: image.NewUniform(c), Face: basicfont.Face7x13, Dot: fixed.P(x, y)}
	d.DrawString(s)
}
