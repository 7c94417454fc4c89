// Package filter implements the OData $filter language of Azure Table
// Storage: a scanner, a parser producing a syntax tree (Expr), a checker
// producing the checked tree of node.go (Filter), an evaluator and a
// printer.
//
// Typical use:
//
//	f, err := filter.Compile("Age ge 30 and City eq 'Lisbon'", nil)
//	if err != nil { ... } // an *Error with CodeInvalidInput or CodeNotImplemented
//	if f.Match(entity) { ... }
package filter
