//go:build !filterlanded

package model

import ts "github.com/tablestore/tablestore"

// Query is not available until package filter is complete.
func (m *Model) Query(tableName string, q ts.Query) ([]*ts.Entity, error) {
	return nil, fail(ts.CodeNotImplemented)
}
