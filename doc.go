// Package tablestore is an embedded, durable table store with the data
// model and semantics of Azure Table Storage, built on Pebble.
//
// There are only a few types:
//
//   - DB: an open store (Open on disk, OpenInMemory for tests). It holds
//     tables: CreateTable, DeleteTable (constant time), ListTables, Table.
//   - Table: a handle on one table. Insert, Get, Update (Merge or Replace,
//     with If-Match), Upsert, Delete (with If-Match), Query / QueryPage /
//     Explain, and SubmitTransaction or NewBatch for entity group
//     transactions.
//   - Entity: PartitionKey, RowKey, the engine-set Timestamp and ETag, and
//     up to 252 typed properties (the eight EDM types map to Go types; see
//     Entity). MarshalEntity and UnmarshalEntity convert Go structs;
//     Entity's JSON methods speak Azure's wire format.
//   - Query and Page: an OData $filter (package filter), $select and $top,
//     results in (PartitionKey, RowKey) order, paged by stateless
//     continuation tokens.
//
// Errors are *Error values carrying Azure's error code (and *BatchError
// for transactions, with the failing action's index); match them with
// errors.Is against the Err* sentinels, or read the code with ErrorCode.
// Bad input is always rejected before anything is written.
//
// Storage sits behind package driver: Open and OpenInMemory use the
// embedded engine, OpenDriver any other driver.Conn, such as the remote
// Azure driver. Validation, conversion, paging and errors stay in this
// package, so code behaves the same on every driver.
//
// Concurrency: a DB and its Tables are safe for concurrent use. Writes to
// one partition (table, PartitionKey) serialize on a lock; reads take no
// lock and see committed data only. Entities returned to the caller are
// the caller's to keep and modify.
package tablestore
