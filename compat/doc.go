// Package compat holds tests that drive the tablestore REST server with
// Azure's official SDKs. It is a module of its own so that the library's
// go.mod never depends on the Azure SDK.
package compat
