//go:build race

package server

// raceEnabled says the race detector is on: it multiplies memory and
// time, so the memory and latency figures are not checked.
const raceEnabled = true
