//go:build race

package tablestore

// raceEnabled says the race detector is on: it allocates on its own, so
// allocation bounds are not checked.
const raceEnabled = true
