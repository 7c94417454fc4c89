// Package entityenc turns property maps into stored records and back, and
// holds every check of Azure's rules on what an entity may hold: keys,
// property names, table names, values and the entity limits. It also
// reads the text forms of EDM values (the strings Azure's JSON writes
// for Int64, Double, DateTime, Guid and Binary), for the JSON decoder and
// the struct mapping alike.
//
// It sits below the root package and never imports it. Its errors are
// *Error values carrying Azure's codes, which the root package turns into
// its own *Error with the same code and message.
package entityenc

import (
	"fmt"

	"github.com/tablestore/tablestore/edm"
)

// Error is input refused by one of Azure's rules: Code is Azure's error
// code, Message says what was wrong in lowercase prose.
type Error struct {
	Code    edm.Code
	Message string
}

func (e *Error) Error() string { return "tablestore: " + string(e.Code) + ": " + e.Message }

// Errorf returns an *Error with code and a message formatted as by
// fmt.Sprintf.
func Errorf(code edm.Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// Prefix returns err with prefix and ": " before its message when err is
// an *Error (keeping its code), and err unchanged otherwise.
func Prefix(err error, format string, args ...any) error {
	e, ok := err.(*Error)
	if !ok {
		return err
	}
	return &Error{Code: e.Code, Message: fmt.Sprintf(format, args...) + ": " + e.Message}
}
