// Package edm holds the Entity Data Model of Azure Table Storage as every
// other package of this module sees it: the eight property types, the
// typed Value that filters compare and records store, GUIDs, DateTime
// ticks with the one parser and formatter of DateTime text, and the error
// codes Azure answers with.
//
// It is a leaf: it imports nothing of this module, so filter, the engine,
// the server and the root package can all share it.
package edm
