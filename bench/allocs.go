package main

import (
	"math"
	"runtime"
)

// allocMeter counts the heap allocations (runtime.MemStats.Mallocs, which
// counts every object, tiny ones included) made during the measured parts
// of one round of a workload, by every goroutine of the process, and the
// entities those parts read or wrote. Reading the counter stops the world
// briefly, so workloads read it only outside their timed sections.
//
// It also counts the CPU time the process used (user and system, every
// thread: the store's background work and the collector included) over
// the same parts: unlike elapsed time, it hardly grows when other
// processes take the machine's CPUs.
type allocMeter struct {
	ms       runtime.MemStats
	start    uint64
	objects  uint64
	entities int
	// own is the benchmark's own share of objects (see discount).
	own float64
	// cpuStart and cpu are process CPU times, ns.
	cpuStart, cpu int64
}

// begin starts a measured part.
func (m *allocMeter) begin() {
	runtime.ReadMemStats(&m.ms)
	m.start = m.ms.Mallocs
	m.cpuStart = processCPU()
}

// end closes the part begin started, which handled entities entities.
func (m *allocMeter) end(entities int) {
	m.cpu += processCPU() - m.cpuStart
	runtime.ReadMemStats(&m.ms)
	m.objects += m.ms.Mallocs - m.start
	m.entities += entities
}

// cpuPerEntity returns the CPU time per entity over the round, ns, or
// NaN when nothing was measured.
func (m *allocMeter) cpuPerEntity() float64 {
	if m.entities == 0 {
		return math.NaN()
	}
	return float64(m.cpu) / float64(m.entities)
}

// discount removes from the count the benchmark's own work done inside a
// measured part: calls calls of f, whose allocations are measured here by
// running it as many times again.
func (m *allocMeter) discount(calls int, f func(i int)) {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	before := ms.Mallocs
	for i := range calls {
		f(i)
	}
	runtime.ReadMemStats(&ms)
	m.own += float64(ms.Mallocs - before)
}

// perEntity returns the allocations per entity over the round, or NaN
// when nothing was measured.
func (m *allocMeter) perEntity() float64 {
	if m.entities == 0 {
		return math.NaN()
	}
	return max(float64(m.objects)-m.own, 0) / float64(m.entities)
}
