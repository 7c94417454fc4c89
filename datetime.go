package tablestore

import (
	"time"

	"github.com/tablestore/tablestore/edm"
)

// parseJSONTime parses DateTime text as Azure's JSON writes it
// (edm.JSONSyntax) into a time.Time in UTC. Errors: InvalidInput for bad
// syntax or fields, OutOfRangeInput for a UTC year outside 1 to 9999.
func parseJSONTime(s string) (time.Time, error) {
	ticks, err := edm.ParseDateTime(s, edm.JSONSyntax)
	if err != nil {
		if err.(*edm.DateTimeError).Code == CodeOutOfRangeInput {
			return time.Time{}, newError(CodeOutOfRangeInput, "datetime %s is outside years 1 to 9999", quoteShort(s))
		}
		return time.Time{}, newError(CodeInvalidInput, "malformed datetime %s", quoteShort(s))
	}
	return edm.TimeFromTicks(ticks), nil
}
