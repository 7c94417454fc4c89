package main

import (
	"image/png"
	"os"
	"path/filepath"
	"testing"
)

func TestChartBars(t *testing.T) {
	res := &results{Scale: scales["small"]}
	res.Rows = []*row{
		{figure: fig("a", "a", "twice as fast", "entities/s", true),
			Values: map[string]float64{sideTablestore: 200, sidePebble: 100, sideSQLite: 400}},
		{figure: fig("b", "b", "latency", "ns/op", false),
			Values: map[string]float64{sideTablestore: 100, sidePebble: 10}},
	}
	path := filepath.Join(t.TempDir(), "c.png")
	if err := writeChart(path, res); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	rowH := len(chartSides)*barH + rowGap
	if h := img.Bounds().Dy(); h != headerH+2*rowH+footerH {
		t.Fatalf("height %d", h)
	}
	at := func(v float64, row, bar int) (uint32, uint32, uint32) {
		x := (chartX(1) + chartX(v)) / 2
		y := headerH + row*rowH + bar*barH + barH/2
		r, g, b, _ := img.At(x, y).RGBA()
		return r >> 8, g >> 8, b >> 8
	}
	// Row a: 2x faster than pebble (right), 0.5x of sqlite (left).
	if r, g, b := at(2, 0, 0); r != 68 || g != 114 || b != 196 {
		t.Errorf("pebble bar of row a missing: %d,%d,%d", r, g, b)
	}
	if r, g, b := at(0.5, 0, 2); r != 237 || g != 125 || b != 49 {
		t.Errorf("sqlite bar of row a missing: %d,%d,%d", r, g, b)
	}
	// Row b: 10x the time is 0.1x the speed, drawn to the left.
	if r, g, b := at(0.1, 1, 0); r != 68 || g != 114 || b != 196 {
		t.Errorf("pebble bar of row b missing: %d,%d,%d", r, g, b)
	}
	if r, g, b := at(10, 1, 0); r != 255 || g != 255 || b != 255 {
		t.Errorf("row b drawn on the wrong side: %d,%d,%d", r, g, b)
	}
}

func TestCommas(t *testing.T) {
	for _, c := range []struct {
		v    float64
		want string
	}{{0, "0"}, {999, "999"}, {1000, "1,000"}, {1234567.6, "1,234,568"}, {-4500, "-4,500"}} {
		if got := commas(c.v); got != c.want {
			t.Errorf("commas(%v) = %q, want %q", c.v, got, c.want)
		}
	}
}
