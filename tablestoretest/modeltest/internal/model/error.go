package model

import (
	"fmt"

	ts "github.com/tablestore/tablestore"
)

// Error is a failure the model predicts: Azure's code and, for a failed
// transaction, the 0-based index of the failing action (-1 otherwise).
// Messages are not modelled.
type Error struct {
	Code  ts.Code
	Index int
}

func (e *Error) Error() string {
	if e.Index >= 0 {
		return fmt.Sprintf("model: action %d: %s", e.Index, e.Code)
	}
	return fmt.Sprintf("model: %s", e.Code)
}

// fail returns a non-transaction Error.
func fail(code ts.Code) *Error { return &Error{Code: code, Index: -1} }

// failAt returns a transaction Error at action index i.
func failAt(code ts.Code, i int) *Error { return &Error{Code: code, Index: i} }
