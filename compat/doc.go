// Package compat holds tests that run tablestore against the Azure SDK for
// Go (aztables): JSON interoperability in both directions, and the REST
// server's conversations with the SDK. It is its own module so that the
// SDK never enters the library's dependencies.
package compat
