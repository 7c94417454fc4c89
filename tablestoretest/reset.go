package tablestoretest

import (
	"fmt"
	"slices"
	"strings"
)

// ResetPart is a part of a test's world that Reset puts back; parts
// combine with |.
type ResetPart uint8

const (
	// ResetState returns the store to its baseline: an empty store, or
	// a copy of the snapshot given to SetBaseline.
	ResetState ResetPart = 1 << iota
	// ResetFaults removes every fault rule.
	ResetFaults
	// ResetClock sets the clock back to the wall clock.
	ResetClock
	// ResetRequests empties the request log.
	ResetRequests

	// ResetAll is a clean slate: every part.
	ResetAll = ResetState | ResetFaults | ResetClock | ResetRequests
)

type resetPartName struct {
	name string
	part ResetPart
}

// resetPartNames are the parts' names over HTTP (POST
// /testkit/reset?only=state,clock).
var resetPartNames = []resetPartName{{"state", ResetState}, {"faults", ResetFaults}, {"clock", ResetClock}, {"requests", ResetRequests}}

// resetWorld resets parts (none: all) of a Server's or DB's world; a DB
// has no request log (nil).
func resetWorld(w *world, faults *faultSet, clock *Clock, log *requestLog, parts []ResetPart) error {
	p := resetParts(parts)
	if p&ResetState != 0 {
		if err := w.reset(); err != nil {
			return err
		}
	}
	if p&ResetFaults != 0 {
		faults.clear()
	}
	if p&ResetClock != 0 {
		clock.Reset()
	}
	if p&ResetRequests != 0 && log != nil {
		log.clear()
	}
	return nil
}

// resetParts combines parts; none is ResetAll.
func resetParts(parts []ResetPart) ResetPart {
	var p ResetPart
	for _, x := range parts {
		p |= x
	}
	if p == 0 {
		return ResetAll
	}
	return p
}

// parseResetParts reads a comma-separated list of part names.
func parseResetParts(list string) (ResetPart, error) {
	var p ResetPart
	for name := range strings.SplitSeq(list, ",") {
		i := slices.IndexFunc(resetPartNames, func(n resetPartName) bool { return n.name == strings.TrimSpace(name) })
		if i < 0 {
			return 0, fmt.Errorf("only: %q is not a part to reset (state, faults, clock or requests)", name)
		}
		p |= resetPartNames[i].part
	}
	return p, nil
}
