package filter

import "github.com/tablestore/tablestore/edm"

// This file compiles a checked tree into a flat program for Match: one
// step per comparison, in the order they appear, each saying where to go
// when it holds and when it does not (jumping code). and, or and not cost
// nothing at run time: they only choose the jump targets. Evaluation is a
// loop without recursion or type switches.

// Jump targets that end the evaluation.
const (
	accept = -1
	reject = -2
)

// step is one comparison of a program.
type step struct {
	property string
	op       Op
	value    edm.Value
	onTrue   int32 // next step, accept or reject
	onFalse  int32
}

// compileProgram returns the program of root, or nil if root is nil or
// holds a ConstNode or a node of no known type (Match then uses Eval).
func compileProgram(root Node) []step {
	n, ok := countComparisons(root)
	if !ok || n == 0 {
		return nil
	}
	prog := make([]step, n)
	emit(prog, root, 0, accept, reject)
	return prog
}

// countComparisons returns the number of CompareNodes under n, and false
// if n holds a nil or unknown node.
func countComparisons(n Node) (int, bool) {
	switch n := n.(type) {
	case *CompareNode:
		return 1, n != nil
	case *AndNode:
		if n == nil {
			return 0, false
		}
		return countPair(n.X, n.Y)
	case *OrNode:
		if n == nil {
			return 0, false
		}
		return countPair(n.X, n.Y)
	case *NotNode:
		if n == nil {
			return 0, false
		}
		return countComparisons(n.X)
	}
	return 0, false
}

func countPair(x, y Node) (int, bool) {
	a, ok := countComparisons(x)
	if !ok {
		return 0, false
	}
	b, ok := countComparisons(y)
	return a + b, ok
}

// emit writes the steps of n starting at prog[start]: control goes to t
// when n holds and to f when it does not. It returns the index after n's
// steps.
func emit(prog []step, n Node, start int, t, f int32) int {
	switch n := n.(type) {
	case *CompareNode:
		prog[start] = step{property: n.Property, op: n.Op, value: n.Value, onTrue: t, onFalse: f}
		return start + 1
	case *AndNode:
		mid := start + mustCount(n.X)
		emit(prog, n.X, start, int32(mid), f)
		return emit(prog, n.Y, mid, t, f)
	case *OrNode:
		mid := start + mustCount(n.X)
		emit(prog, n.X, start, t, int32(mid))
		return emit(prog, n.Y, mid, t, f)
	case *NotNode:
		return emit(prog, n.X, start, f, t)
	}
	return start
}

func mustCount(n Node) int {
	c, _ := countComparisons(n)
	return c
}

// run evaluates a program against p.
func run(prog []step, p Properties) bool {
	i := int32(0)
	for {
		s := &prog[i]
		v, ok := p.Lookup(s.property)
		if ok && compare(&v, s.op, &s.value) {
			i = s.onTrue
		} else {
			i = s.onFalse
		}
		if i < 0 {
			return i == accept
		}
	}
}
