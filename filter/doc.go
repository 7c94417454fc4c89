// Package filter implements the OData $filter language of Azure Table
// Storage, in stages shaped like go/token, go/scanner, go/ast and
// go/parser:
//
//   - Scanner splits the text into Tokens (token.go, scanner.go).
//   - Parse builds a syntax tree of Expr nodes with positions (ast.go,
//     parser.go); Print writes a tree back as canonical text (print.go).
//   - Check resolves a syntax tree into a Filter, the checked tree of
//     node.go that the evaluator runs and a query planner reads (check.go).
//     Compile is Parse followed by Check.
//   - Filter.Match and Eval evaluate a checked tree against an entity's
//     Properties (eval.go). Check also compiles the tree into a flat
//     program, one step per comparison, which Match runs (program.go).
//     Format writes a checked tree as canonical text.
//
// Typical use:
//
//	f, err := filter.Compile("Age ge 30 and City eq 'Lisbon' and Active", nil)
//	if err != nil {
//		return err // an *Error: edm.CodeInvalidInput or edm.CodeNotImplemented
//	}
//	if f.Match(entity) { ... }
//
// A Filter is immutable and safe for concurrent use. Match allocates
// nothing itself.
//
// # User input
//
// Build puts Go values into a filter as typed literals, so user input can
// never change the filter's shape (build.go):
//
//	src, err := filter.Build("PartitionKey eq %s and Age ge %s", pk, int32(30))
//
// The Go type picks the EDM type: int32 gives 30, int64 30L, float64 30.0,
// time.Time datetime'...', a [16]byte kind (tablestore.GUID) guid'...',
// []byte X'...', a string a quoted literal with ' doubled. Other types (int
// included: say int32 or int64) are errors, never a %v rendering. Literal
// gives one value's literal.
//
// # Grammar
//
// Tokens may be separated by spaces, tabs and line breaks; parentheses and
// quotes need no separation, but a number glued to a letter (`5and`) is
// malformed. Keywords and literal prefixes are lowercase only, as in Azure:
// `Eq`, `AND` and `True` are property names.
//
//	filter     = [ or ] .                          (empty: no filter)
//	or         = and { "or" and } .
//	and        = unary { "and" unary } .
//	unary      = "not" unary | primary .
//	primary    = "(" or ")" | operand [ comparison operand ] .
//	comparison = "eq" | "ne" | "gt" | "ge" | "lt" | "le" .
//	operand    = property | literal .
//	property   = ( letter | "_" ) { letter | digit | "_" } .
//
// Precedence runs not > and > or: `A or B and C` is `A or (B and C)` and
// `not A and B` is `(not A) and B`; and and or group from the left. A
// comparison binds tighter than not, so `not X eq 1` is `not (X eq 1)`.
// A bare property name stands for `Name eq true`. The constants true and
// false are conditions too (`false` matches nothing; `true` everything) and
// Check folds them: `(true and A) or false` is `A eq true`.
//
// Either side of a comparison may be the literal: `30 lt Age` is checked
// into `Age gt 30`. Exactly one side must be a property and the other a
// literal.
//
// # Literals
//
//	Edm.String    'text', with '' for a quote: 'O''Connor'
//	Edm.Int32     123, -5 (must fit in 32 bits; no suffix)
//	Edm.Int64     123L or 123l
//	Edm.Double    1.5, -0.25, 1e10, 1.5E-3, and the suffix form 3D, 3.0d, 1e5D
//	Edm.Boolean   true, false
//	Edm.DateTime  datetime'2008-07-10T00:00:00Z'
//	Edm.Guid      guid'a455c695-df98-5678-aaaa-81d3367e5a34'
//	Edm.Binary    X'0A0B', x'0a0b', binary'0a0b'
//
// Numbers: a leading '-' glued to the digits is part of the literal. A
// Double needs digits on both sides of a '.', and an exponent needs
// digits. The D suffix, which Azure clients send, makes any number a
// Double; its form is not documented by Microsoft, so accepting it is a
// choice. A Double that overflows, an Int32 without L that does not fit in
// 32 bits ("unrecognized 'Edm.Int32' literal", as Azure says) and an Int64
// that does not fit in 64 bits are InvalidInput. There are no literals for
// NaN or infinities.
//
// DateTime: YYYY-MM-DDThh:mm[:ss[.fffffff]][Z|±hh:mm]. Up to 7 fraction
// digits (100 ns ticks). Without a zone the value is UTC; an offset is
// converted to UTC. The result must lie between 0001-01-01T00:00:00Z and
// 9999-12-31T23:59:59.9999999Z. Azure rejects stored DateTimes before 1601,
// but a filter may compare with any date.
//
// Guid: the canonical 8-4-4-4-12 hex form, either case, without braces.
// Binary: an even number of hex digits, either case; none at all gives
// the empty value.
//
// null is recognised and rejected (InvalidInput), as Azure does not allow
// it. Double-quoted strings are not strings: `"x"` is a syntax error.
//
// # Semantics
//
// Match evaluates a filter against one entity. Properties.Lookup supplies
// the values, including PartitionKey, RowKey and Timestamp. The rules are
// those observed on real Azure (not those of its emulator):
//
//	property missing              every comparison is false, ne included;
//	                              a bare name is false
//	same type                     natural order (see below)
//	Int64 property, Int32 literal compared numerically
//	Double property, Int32 or     compared numerically and exactly
//	  Int64 literal               (no rounding through float64)
//	any other pairing             eq, gt, ge are false; ne, lt, le are true
//	  (Int32 property vs Int64
//	  or Double literal, Int64
//	  property vs Double literal,
//	  String vs number, Guid vs
//	  String, ...)
//	not X                         the negation of X: `not (X eq 1)` matches
//	                              entities without X; `X ne 1` does not
//
// Orders within a type: String ordinal (byte-wise UTF-8, case-sensitive,
// so "B" < "b" and a prefix sorts first; Azure orders UTF-16 code units,
// which differs only for characters above U+FFFF against U+E000-U+FFFF);
// Binary byte-wise with a prefix first; Guid by its 16 bytes in text
// order, which is the order of the lowercase canonical text; DateTime
// chronological; Boolean false < true; numbers numerically.
//
// Doubles are totally ordered, so that exactly one of lt, eq and gt holds
// for every comparable pair: NaN equals NaN and sorts below every other
// value, -INF included, and -0 equals +0. (Literals cannot be NaN; stored
// values can.) So a stored NaN matches `X lt 0`, `X le -1e308` and
// `X ne 5`, and never `X ge ...` or `X eq ...`.
//
// What Azure does with a stored NaN is not documented, and no observation
// of it is known to us (the digest's comparison matrix has no NaN case).
// This order is a choice: it is the order of .NET's Double.CompareTo
// (NaN equal to itself and less than every number), which a .NET service
// comparing boxed values would apply; IEEE comparison operators would
// instead make every comparison with NaN false but ne. A total order keeps
// `not (X lt 5)` equal to `X ge 5` on every Double, which query planning
// and paging rely on.
//
// # Limits
//
// Limits bound a filter; exceeding one is InvalidInput. The fields of
// DefaultLimits, used when Parse or Compile get nil:
//
//	MaxLength       32768  bytes of filter text
//	MaxDepth        64     nesting of parentheses and not
//	MaxComparisons  200    comparisons, bare property names included
//
// A zero field means no limit, except that nesting is always capped at
// 10000 so that parsing, checking and evaluating cannot exhaust the stack.
// Azure documents 15 comparisons per filter but does not appear to enforce
// it; a caller that wants Azure's documented limit sets MaxComparisons to
// 15.
//
// # Errors
//
// Every error from Parse, Check, Compile and ParseLiteral is an *Error
// holding Azure's code, the byte position and a lowercase message; its
// Error method adds an excerpt of the filter with a caret:
//
//	filter: syntax error at position 7: expected property name or literal, found 'and'
//	  Age gt and X
//	         ^
//
// edm.CodeInvalidInput (Azure: 400 InvalidInput): syntax errors, malformed or
// out-of-range literals, null, exceeded limits.
//
// edm.CodeNotImplemented (Azure: 501 NotImplemented): comparing two properties
// (`a eq b`) or two constants (`1 eq 2`), a constant other than true and
// false alone as a condition (`5`), function calls
// (`startswith(Name,'a')`), arithmetic (`add`, `sub`, `mul`, `div`, `mod`,
// `+`, `-`, `*`) and property paths (`A/B`).
//
// # Printing
//
// Print writes a syntax tree with single spaces between tokens, keeping
// its parentheses and the raw spelling of its literals; Parse(Print(x))
// equals x except for positions. Format (and Filter.String) writes a
// checked tree canonically: property on the left, `Name eq true` for bare
// names, `not (...)` parenthesised, other parentheses only where the shape
// needs them, literals as FormatLiteral writes them (datetime'…Z' with the
// fraction trimmed, lowercase guid and hex, Doubles with a '.' or an
// exponent). Compile(Format(n)) gives a tree equal to n.
package filter
