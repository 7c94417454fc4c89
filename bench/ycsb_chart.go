package main

import (
	"fmt"
	"image"
	"image/color"
	"image/draw"
)

// ycsbColours are the bar colours of the YCSB chart's sides.
var ycsbColours = map[string]color.RGBA{
	sideTablestore: {0, 128, 96, 255},
	sideTyped:      colTarget,
	sideBadger:     colPebbleMaps,
	sideBbolt:      {150, 110, 40, 255},
	sideSQLite:     colSQLite,
	ycsbServer:     {0, 128, 96, 255},
}

// drawYCSBChart draws, per workload and mode, each side's throughput
// relative to its reference (raw Pebble for the embedded sides, Azurite
// over HTTP) on a log scale centred on 1.
func drawYCSBChart(meta ycsbMeta, rows []*ycsbResult) *image.RGBA {
	type group struct {
		label string
		bars  []*ycsbResult
	}
	var groups []group
	index := map[string]int{}
	for _, r := range rows {
		ref := ycsbRef(rows, r)
		if r.Error != "" || ref == nil || ref == r || r.Workload == "load" && ref.Side == ycsbAzurite {
			continue
		}
		label := fmt.Sprintf("%s %s vs %s", r.Workload, r.Durability, ref.Side)
		if ref.Side == ycsbAzurite {
			label = fmt.Sprintf("%s HTTP, %d threads, vs Azurite", r.Workload, r.Threads)
		}
		i, ok := index[label]
		if !ok {
			i = len(groups)
			index[label] = i
			groups = append(groups, group{label: label})
		}
		groups[i].bars = append(groups[i].bars, r)
	}
	height := headerH + footerH
	for _, g := range groups {
		height += len(g.bars)*barH + rowGap
	}
	img := image.NewRGBA(image.Rect(0, 0, chartWidth, height))
	draw.Draw(img, img.Bounds(), image.NewUniform(colBackground), image.Point{}, draw.Src)
	text(img, 12, 20, colText, fmt.Sprintf("YCSB throughput relative to raw Pebble (embedded) and Azurite (HTTP), %s records", commas(float64(meta.Records))))
	text(img, 12, 38, colText, "bar = side ops/s / reference ops/s, log scale; right of 1x: faster than the reference")
	text(img, 12, 56, colText, meta.Machine)
	lx := plotLeft
	for _, side := range append(ycsbSides[:len(ycsbSides):len(ycsbSides)], ycsbServer) {
		if side == sidePebble {
			continue
		}
		fill(img, lx, 66, 12, 10, ycsbColours[side])
		text(img, lx+18, 76, colText, side)
		lx += 18 + 7*len(side) + 20
	}
	y := headerH
	top := y
	for _, g := range groups {
		text(img, 12, y+barH, colText, g.label)
		for _, r := range g.bars {
			ratio := r.OpsPerSec / ycsbRef(rows, r).OpsPerSec
			x0, x1 := chartX(1), chartX(ratio)
			if x1 < x0 {
				x0, x1 = x1, x0
			}
			fill(img, x0, y+1, max(x1-x0, 1), barH-2, ycsbColours[r.Side])
			text(img, max(x1, chartX(1))+4, y+barH-2, colText, fmt.Sprintf("%s %.2fx", r.Side, ratio))
			y += barH
		}
		y += rowGap
	}
	for _, v := range []float64{0.01, 0.1, 1, 10, 100} {
		c := colGrid
		if v == 1 {
			c = colOne
		}
		fill(img, chartX(v), top-4, 1, y-top, c)
		text(img, chartX(v)-10, y+14, colText, fmt.Sprintf("%gx", v))
	}
	return img
}
