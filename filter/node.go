package filter

import "github.com/tablestore/tablestore/edm"

import "strconv"

// This file holds the checked form of a filter: the tree that Check
// produces, that the evaluator runs and that the engine's planner reads.
// Names and literal types are resolved here, once, not per entity.

// Op is a comparison operator.
type Op uint8

// The comparison operators, in Azure's spelling.
const (
	OpEQ Op = iota + 1 // eq
	OpNE               // ne
	OpGT               // gt
	OpGE               // ge
	OpLT               // lt
	OpLE               // le
)

// Node is a node of a checked filter: *AndNode, *OrNode, *NotNode,
// *CompareNode or *ConstNode.
type Node interface{ node() }

// AndNode matches when both X and Y match.
type AndNode struct{ X, Y Node }

// OrNode matches when X or Y matches.
type OrNode struct{ X, Y Node }

// NotNode negates X. An entity that lacks a property compared inside X
// makes X false, so NotNode matches it.
type NotNode struct{ X Node }

// CompareNode compares one property with a literal. The property is always
// on the left: a filter written `1 lt X` is checked into `X gt 1`. A bare
// property name `X` is checked into `X eq true`.
type CompareNode struct {
	Property string
	Op       Op
	Value    edm.Value
}

// ConstNode is a boolean constant, matching every entity or none. Check
// folds constants away: its result holds a ConstNode only as the whole
// tree of the filter `false` (the filter `true` checks to a nil Root).
type ConstNode struct{ Value bool }

func (*AndNode) node()     {}
func (*ConstNode) node()   {}
func (*OrNode) node()      {}
func (*NotNode) node()     {}
func (*CompareNode) node() {}

var opNames = [...]string{OpEQ: "eq", OpNE: "ne", OpGT: "gt", OpGE: "ge", OpLT: "lt", OpLE: "le"}

// String returns Azure's spelling of op, such as "ge".
func (op Op) String() string {
	if op < OpEQ || op > OpLE {
		return "op(" + strconv.Itoa(int(op)) + ")"
	}
	return opNames[op]
}

// Flip returns the operator that keeps the meaning when the operands swap
// sides: `1 lt X` is `X gt 1`. eq and ne are their own flips.
func (op Op) Flip() Op {
	switch op {
	case OpGT:
		return OpLT
	case OpGE:
		return OpLE
	case OpLT:
		return OpGT
	case OpLE:
		return OpGE
	}
	return op
}

// Negate returns the operator whose result is the opposite for an entity
// that has the property: eq/ne, gt/le, ge/lt. (For an entity without it,
// both are false.)
func (op Op) Negate() Op {
	switch op {
	case OpEQ:
		return OpNE
	case OpNE:
		return OpEQ
	case OpGT:
		return OpLE
	case OpGE:
		return OpLT
	case OpLT:
		return OpGE
	case OpLE:
		return OpGT
	}
	return op
}
