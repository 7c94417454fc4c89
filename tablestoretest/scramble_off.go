//go:build !race && !invariants

package tablestoretest

// memFSScrambles: see scramble_on.go.
const memFSScrambles = false
