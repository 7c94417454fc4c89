//go:build race || invariants

package tablestoretest

// memFSScrambles says that Pebble's MemFS flips the bytes of every buffer
// written to it, as it does in builds with its invariants on (race
// builds and the invariants tag): a buffer that must survive the write is
// copied first.
const memFSScrambles = true
