package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"runtime/pprof"
	"strings"
	"text/tabwriter"
	"time"
)

// row is one figure measured on every side.
type row struct {
	figure
	// Values maps side to the figure; a side that failed or did not run
	// is absent.
	Values map[string]float64 `json:"values"`
	// Rounds maps side to the figure of every round, in run order.
	Rounds map[string][]float64 `json:"rounds"`
	// Errors maps side to why it has no value.
	Errors map[string]string `json:"errors,omitempty"`
	// VsPebble, VsPebbleMaps and VsSQLite are tablestore's figure
	// divided by the comparator's (null when either is missing).
	VsPebble     *float64 `json:"tablestoreOverPebble"`
	VsPebbleMaps *float64 `json:"tablestoreOverPebbleMaps"`
	VsSQLite     *float64 `json:"tablestoreOverSqlite"`
}

// allocRow is one workload's heap allocations per entity on every side:
// the lowest over its rounds, and every round's.
type allocRow struct {
	Workload string `json:"workload"`
	Label    string `json:"label"`
	// Per says what one entity is: a written, returned or inserted
	// entity, or an update attempt.
	Per    string               `json:"per"`
	Values map[string]float64   `json:"values"`
	Rounds map[string][]float64 `json:"rounds"`
}

// results collect a run's figures in report order.
type results struct {
	Scale     scale     `json:"scale"`
	Command   string    `json:"command"`
	Started   time.Time `json:"started"`
	Seconds   float64   `json:"seconds"`
	GoVersion string    `json:"goVersion"`
	CPUs      int       `json:"cpus"`
	CacheSize int64     `json:"cacheSizeBytes"`
	BlockSize int       `json:"blockSizeBytes,omitempty"` // 0: Pebble's default
	Rounds    int       `json:"rounds"`
	Rows      []*row    `json:"rows"`
	// Allocs holds the allocations per entity of each reported workload.
	Allocs []*allocRow `json:"allocsPerEntity"`
	// CPU holds the process CPU time per entity (ns) of each reported
	// workload, in the same form.
	CPU     []*allocRow `json:"cpuNsPerEntity"`
	Targets []target    `json:"targets,omitempty"`
	// Settled says every main store was compacted after the bulk load
	// (SettleSeconds per side), so reads saw Shapes rather than
	// ShapesAfterLoad.
	Settled         bool                `json:"settled"`
	SettleSeconds   map[string]float64  `json:"settleSeconds,omitempty"`
	ShapesAfterLoad map[string]lsmShape `json:"lsmAfterLoad,omitempty"`
	Shapes          map[string]lsmShape `json:"lsmSettled,omitempty"`
}

func (r *results) row(id string) *row {
	for _, x := range r.Rows {
		if x.ID == id {
			return x
		}
	}
	return nil
}

// value returns the figure id of side, or NaN.
func (r *results) value(id, side string) float64 {
	x := r.row(id)
	if x == nil {
		return math.NaN()
	}
	v, ok := x.Values[side]
	if !ok {
		return math.NaN()
	}
	return v
}

func (r *results) unit(id string) string {
	if x := r.row(id); x != nil {
		return x.Unit
	}
	return ""
}

// better reports whether figure value a beats b.
func (x *row) better(a, b float64) bool {
	if x.HigherIsBetter {
		return a > b
	}
	return a < b
}

// ratio returns tablestore's figure over the comparator's.
func (x *row) ratio(side string) float64 { return x.ratioOf(sideTablestore, side) }

// ratioOf returns side a's figure over side b's.
func (x *row) ratioOf(a, b string) float64 {
	ts, ok1 := x.Values[a]
	c, ok2 := x.Values[b]
	if !ok1 || !ok2 || c == 0 {
		return math.NaN()
	}
	return ts / c
}

// finish fills the ratio fields.
func (r *results) finish() {
	for _, x := range r.Rows {
		x.VsPebble, x.VsPebbleMaps, x.VsSQLite = nil, nil, nil
		if v := x.ratio(sidePebble); !math.IsNaN(v) {
			x.VsPebble = &v
		}
		if v := x.ratio(sidePebbleMaps); !math.IsNaN(v) {
			x.VsPebbleMaps = &v
		}
		if v := x.ratio(sideSQLite); !math.IsNaN(v) {
			x.VsSQLite = &v
		}
	}
}

func betterWord(higher bool) string {
	if higher {
		return "higher"
	}
	return "lower"
}

// printTable writes the one results table.
func printTable(w io.Writer, r *results) {
	blocks := ""
	if r.BlockSize > 0 {
		blocks = fmt.Sprintf(", %d KiB blocks", r.BlockSize>>10)
	}
	fmt.Fprintf(w, "\ntablestore vs raw Pebble (and raw Pebble into maps) vs SQLite, scale %s (%s entities), cache %d MiB%s, %d CPUs, %s,\nbest of %d rounds (bulk load without sync: 1 round)\n\n",
		r.Scale.Name, commas(float64(r.Scale.Entities)), r.CacheSize>>20, blocks, r.CPUs, r.GoVersion, r.Rounds)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "workload\tfigure (better)\ttablestore\ttyped\traw pebble\tpebble maps\tsqlite\ttablestore/pebble\ttyped/pebble\ttablestore/pebble maps\ttablestore/sqlite\t")
	for _, x := range r.Rows {
		fmt.Fprintf(tw, "%s\t%s (%s)\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", x.Label, x.Unit, betterWord(x.HigherIsBetter),
			cell(x, sideTablestore), cell(x, sideTyped), cell(x, sidePebble), cell(x, sidePebbleMaps), cell(x, sideSQLite),
			formatRatio(x.ratio(sidePebble)), formatRatio(x.ratioOf(sideTyped, sidePebble)),
			formatRatio(x.ratio(sidePebbleMaps)), formatRatio(x.ratio(sideSQLite)))
	}
	tw.Flush()
	fmt.Fprintln(w, "\nRatios are tablestore's figure divided by the comparator's. For rows whose figure is")
	fmt.Fprintln(w, "higher-is-better (per second), a ratio above 1 means tablestore is faster; for ns/op rows")
	fmt.Fprintln(w, "(lower is better), a ratio above 1 means tablestore is slower. \"pebble maps\" is raw")
	fmt.Fprintln(w, "Pebble's store read into the property maps tablestore's map API returns (reads only).")
	printAllocs(w, r)
	printCPU(w, r)
	printShapes(w, r)
	var notes []string
	for _, x := range r.Rows {
		for _, side := range sideNames {
			if msg, ok := x.Errors[side]; ok {
				notes = append(notes, fmt.Sprintf("  %s, %s: %s", x.Workload, side, msg))
			}
		}
	}
	if len(notes) > 0 {
		fmt.Fprintln(w, "\nn/a figures:")
		fmt.Fprintln(w, strings.Join(dedupe(notes), "\n"))
	}
}

// printAllocs writes the allocations-per-entity table.
func printAllocs(w io.Writer, r *results) {
	if len(r.Allocs) == 0 {
		return
	}
	fmt.Fprintln(w, "\nheap allocations per entity (runtime.MemStats.Mallocs over the measured part, lowest round):")
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "workload\tper\ttablestore\ttyped\traw pebble\tpebble maps\tsqlite\t")
	for _, a := range r.Allocs {
		fmt.Fprintf(tw, "%s\t%s\t", a.Label, a.Per)
		for _, side := range sideNames {
			v, ok := a.Values[side]
			if !ok {
				fmt.Fprint(tw, "n/a\t")
				continue
			}
			fmt.Fprintf(tw, "%s\t", formatAllocs(v))
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()
}

// printCPU writes the CPU-time-per-entity table.
func printCPU(w io.Writer, r *results) {
	if len(r.CPU) == 0 {
		return
	}
	fmt.Fprintln(w, "\nCPU time per entity, µs (process user+system over the measured part, every thread, lowest round):")
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "workload\tper\ttablestore\ttyped\traw pebble\tpebble maps\tsqlite\ttablestore/pebble maps\t")
	for _, a := range r.CPU {
		fmt.Fprintf(tw, "%s\t%s\t", a.Label, a.Per)
		for _, side := range sideNames {
			v, ok := a.Values[side]
			if !ok {
				fmt.Fprint(tw, "n/a\t")
				continue
			}
			fmt.Fprintf(tw, "%.2f\t", v/1e3)
		}
		ratio := math.NaN()
		if a, b := a.Values[sideTablestore], a.Values[sidePebbleMaps]; a > 0 && b > 0 {
			ratio = a / b
		}
		fmt.Fprintf(tw, "%s\t\n", formatRatio(ratio))
	}
	tw.Flush()
}

// printShapes writes the main stores' LSM shapes after the load and,
// when settled, after compaction.
func printShapes(w io.Writer, r *results) {
	if len(r.ShapesAfterLoad) == 0 {
		return
	}
	fmt.Fprintln(w, "\nmain stores' LSM shapes (files per level; depth: L0 files one key may be in):")
	for _, side := range sideNames {
		if sh, ok := r.ShapesAfterLoad[side]; ok {
			fmt.Fprintf(w, "  %-12s after the load: %s\n", side, sh)
		}
		if sh, ok := r.Shapes[side]; ok {
			fmt.Fprintf(w, "  %-12s compacted (%.1f s): %s\n", "", r.SettleSeconds[side], sh)
		}
	}
	if r.Settled {
		fmt.Fprintln(w, "  every main store was compacted after the load; the reads ran on the compacted stores")
	} else {
		fmt.Fprintln(w, "  -settle=false: the reads ran on the stores as their loads left them")
	}
}

// formatAllocs formats an allocation count with two decimals below 100.
func formatAllocs(v float64) string {
	if v >= 100 {
		return commas(v)
	}
	return fmt.Sprintf("%.2f", v)
}

func cell(x *row, side string) string {
	v, ok := x.Values[side]
	if !ok {
		return "n/a"
	}
	return formatFigure(v)
}

func dedupe(lines []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, l := range lines {
		if !seen[l] {
			seen[l] = true
			out = append(out, l)
		}
	}
	return out
}

// printTargets writes the target table.
func printTargets(w io.Writer, ts []target) {
	fmt.Fprintln(w, "\ntargets (tablestore against raw Pebble in this run, or against itself):")
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "target\tgoal\tvalue\tresult\tmeasured")
	for _, t := range ts {
		res := "MISS"
		if t.Pass {
			res = "ok"
		}
		val := "n/a"
		if !math.IsNaN(t.Value) {
			val = fmt.Sprintf("%.2f %s", t.Value, t.Unit)
			if t.Unit == "x" {
				val = fmt.Sprintf("%.3fx", t.Value)
			}
		} else {
			res = "n/a"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", t.Name, t.Goal, val, res, t.Measured)
	}
	tw.Flush()
	for _, t := range ts {
		if t.Note != "" {
			fmt.Fprintf(w, "  note, %s: %s\n", t.Name, t.Note)
		}
	}
}

// writeJSON writes r to path. NaN target values become null.
func writeJSON(path string, r *results) error {
	type jsonTarget struct {
		target
		Value *float64 `json:"value"`
	}
	out := struct {
		*results
		Targets []jsonTarget `json:"targets,omitempty"`
	}{results: r}
	for _, t := range r.Targets {
		jt := jsonTarget{target: t}
		if !math.IsNaN(t.Value) {
			v := t.Value
			jt.Value = &v
		}
		out.Targets = append(out.Targets, jt)
	}
	b, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

// startCPUProfile starts a CPU profile into the file at path ("": none)
// and returns the function that stops it and closes the file.
func startCPUProfile(path string) (stop func(), err error) {
	if path == "" {
		return func() {}, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}, nil
}
