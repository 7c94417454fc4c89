package main

import (
	"encoding/binary"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// chiSquare returns Pearson's statistic of observed counts against
// expected probabilities over n draws.
func chiSquare(counts []int, probs []float64, n int) float64 {
	s := 0.0
	for i, c := range counts {
		e := probs[i] * float64(n)
		s += (float64(c) - e) * (float64(c) - e) / e
	}
	return s
}

// TestFNV64 checks YCSB's key hash against the standard library's
// FNV-1a over the value's bytes, low byte first.
func TestFNV64(t *testing.T) {
	for _, v := range []int64{0, 1, 2, 999, 1 << 40, math.MaxInt64} {
		h := fnv.New64a()
		h.Write(binary.LittleEndian.AppendUint64(nil, uint64(v)))
		want := int64(h.Sum64())
		if want < 0 {
			want = -want
		}
		if got := fnv64(v); got != want {
			t.Errorf("fnv64(%d) = %d, want %d", v, got, want)
		}
	}
}

// TestZipfianLaw draws from the zipfian over 50 items. Gray's sampler
// is exact for the two most popular items and approximates the law
// 1/(i+1)^0.99 / zeta(50) for the rest by a continuous inverse, so the
// draws are held to that method's own probabilities by chi-square (49
// degrees of freedom exceed 100 with probability below 1e-5), and to the
// law by its head and its total variation distance.
func TestZipfianLaw(t *testing.T) {
	const items, n = 50, 200_000
	const theta = ycsbZipfianConstant
	z := newZipfian(items, theta)
	r := rand.New(rand.NewPCG(1, 2))
	counts := make([]int, items)
	for range n {
		counts[z.next(r, items)]++
	}
	zn := zeta(0, items, theta, 0)
	// below(k) is the chance of a draw under k >= 2: u below the
	// inverse of items*(eta*u-eta+1)^alpha at k, and above the first
	// two items' share.
	u2 := (1 + math.Pow(0.5, theta)) / zn
	below := func(k int) float64 {
		if k >= items {
			return 1
		}
		return max(u2, (math.Pow(float64(k)/items, 1-theta)-1+z.eta)/z.eta)
	}
	method := make([]float64, items)
	law := make([]float64, items)
	for i := range items {
		law[i] = 1 / math.Pow(float64(i+1), theta) / zn
		switch i {
		case 0:
			method[i] = 1 / zn
		case 1:
			method[i] = math.Pow(0.5, theta) / zn
		default:
			method[i] = below(i+1) - below(i)
		}
	}
	if x := chiSquare(counts, method, n); x > 100 {
		t.Errorf("chi-square %.1f against Gray's sampler's probabilities (49 dof), want <= 100; counts %v", x, counts[:10])
	}
	tv := 0.0
	for i := range items {
		tv += math.Abs(float64(counts[i])/n-law[i]) / 2
	}
	if tv > 0.05 {
		t.Errorf("total variation %.3f from the zipfian law, want <= 0.05", tv)
	}
	for i := range 2 {
		if got := float64(counts[i]) / n; math.Abs(got-law[i]) > 0.03*law[i] {
			t.Errorf("item %d drew %.4f, the law gives %.4f", i, got, law[i])
		}
	}
}

// TestZipfianGrows checks that a zipfian whose item count grows draws
// over the new range with zeta extended as if made for it.
func TestZipfianGrows(t *testing.T) {
	z := newZipfian(10, ycsbZipfianConstant)
	r := rand.New(rand.NewPCG(3, 4))
	seen := 0
	for range 100_000 {
		if z.next(r, 1000) >= 10 {
			seen++
		}
	}
	want := newZipfian(1000, ycsbZipfianConstant)
	if math.Abs(z.zetan-want.zetan) > 1e-9 || seen == 0 {
		t.Errorf("grown zetan %v, want %v; %d draws past the first 10 items", z.zetan, want.zetan, seen)
	}
}

// TestScrambledZipfianRankFrequency checks the scrambled zipfian's
// rank-frequency curve: the hottest record takes 1/zeta(10^10) of the
// draws and the log-log slope over ranks 1 to 30 is near -0.99. Hash
// collisions onto the 1,000 items flatten the tail, so only the head is
// held to the law.
func TestScrambledZipfianRankFrequency(t *testing.T) {
	const items, n = 1000, 500_000
	s := newScrambledZipfian(items)
	r := rand.New(rand.NewPCG(5, 6))
	counts := make([]int, items)
	for range n {
		counts[s.next(r, items-1)]++
	}
	slices.SortFunc(counts, func(a, b int) int { return b - a })
	top := float64(counts[0]) / n
	if want := 1 / ycsbScrambledZetan; math.Abs(top-want) > 0.1*want {
		t.Errorf("hottest record drew %.4f, want %.4f within 10%%", top, want)
	}
	// Least-squares slope of log frequency on log rank, ranks 1..30.
	var sx, sy, sxx, sxy float64
	const m = 30
	for i := range m {
		x, y := math.Log(float64(i+1)), math.Log(float64(counts[i]))
		sx, sy, sxx, sxy = sx+x, sy+y, sxx+x*x, sxy+x*y
	}
	slope := (m*sxy - sx*sy) / (m*sxx - sx*sx)
	if slope > -0.8 || slope < -1.2 {
		t.Errorf("rank-frequency slope %.3f, want -0.99 within 0.2", slope)
	}
}

// TestSkewedLatest checks that the latest distribution favours the
// newest record as the zipfian favours its first item, and never picks
// past the last acknowledged record.
func TestSkewedLatest(t *testing.T) {
	const records, n = 1000, 200_000
	l := newSkewedLatest(records)
	r := rand.New(rand.NewPCG(7, 8))
	newest := 0
	for range n {
		k := l.next(r, records-1)
		if k < 0 || k > records-1 {
			t.Fatalf("picked %d of %d records", k, records)
		}
		if k == records-1 {
			newest++
		}
	}
	want := 1 / zeta(0, records, ycsbZipfianConstant, 0)
	if got := float64(newest) / n; math.Abs(got-want) > 0.05*want {
		t.Errorf("newest record drew %.4f, want %.4f within 5%%", got, want)
	}
}

// TestUniformChooser: chi-square over 100 records, 99 dof (above 160
// with probability below 1e-4).
func TestUniformChooser(t *testing.T) {
	const items, n = 100, 100_000
	u := uniformChooser{items}
	r := rand.New(rand.NewPCG(9, 10))
	counts := make([]int, items)
	for range n {
		counts[u.next(r, items-1)]++
	}
	probs := make([]float64, items)
	for i := range probs {
		probs[i] = 1.0 / items
	}
	if x := chiSquare(counts, probs, n); x > 160 {
		t.Errorf("chi-square %.1f against uniform, want <= 160", x)
	}
}

// TestWorkloadMix checks each workload's operation proportions.
func TestWorkloadMix(t *testing.T) {
	const n = 100_000
	r := rand.New(rand.NewPCG(11, 12))
	for _, w := range ycsbWorkloads {
		var counts [ycsbOpCount]int
		for range n {
			counts[w.pick(r)]++
		}
		for op, p := range w.mix {
			if got := float64(counts[op]) / n; math.Abs(got-p) > 0.01 {
				t.Errorf("workload %s: %s %.3f of operations, want %.2f", w.name, ycsbOpNames[op], got, p)
			}
		}
	}
}

// TestYCSBValue checks the record shape: ten fields of 100 printable bytes.
func TestYCSBValue(t *testing.T) {
	f := ycsbRecord(rand.New(rand.NewPCG(1, 1)))
	if len(f) != ycsbFieldCount {
		t.Fatalf("%d fields", len(f))
	}
	for _, v := range f {
		if len(v) != ycsbFieldLength {
			t.Fatalf("field of %d bytes", len(v))
		}
		for _, c := range v {
			if c < ' ' || c > '~' {
				t.Fatalf("byte %d is not printable", c)
			}
		}
	}
}
