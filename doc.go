// Package tablestore is an embedded, durable table store with the data
// model and semantics of Azure Table Storage, built on Pebble.
//
// The API reuses Azure's vocabulary (aztables' names where they fit) and
// is grouped by concept:
//
//   - DB and its catalog. Open (a directory), OpenInMemory (tests) and
//     OpenDriver (any driver.Conn, such as the remote Azure driver) return
//     a *DB; Close ends it. CreateTable, CreateTableIfNotExists,
//     DeleteTable (constant time, the name reusable at once), TableExists,
//     and ListTables with ListTablesOptions and TablePage. Table names are
//     matched ignoring case.
//   - Table and Partition. DB.Table names a table; Insert, Get (with
//     GetOptions), Update (Merge or Replace, with an If-Match ETag),
//     Upsert and Delete write and read one entity. Table.Partition is the
//     view of one PartitionKey, which adds DeleteAll and DeleteRange.
//   - Entity and values. An Entity has its keys, the Timestamp and ETag
//     the engine sets, and up to 252 properties of eight Go types, one per
//     EDM type (see Entity); GUID is Edm.Guid. Writes also take any Go
//     integer: Int32 when it fits, else Int64, as Azure infers JSON.
//     ETagAny matches any version; UpdateMode chooses Merge or Replace.
//   - Queries and plans. A Query holds an OData $filter (package filter),
//     $select and $top, and may read in Reverse or within one Segment of
//     Table.Segments. Table.Query iterates over every page; QueryPage
//     returns one Page and its stateless continuation token
//     (ContinuationFromNext accepts Azure's NextPartitionKey/NextRowKey).
//     Plan shows how a query runs, a QueryPlan of a PlanKind (point,
//     range, partition scan, table scan, empty); Explain is its text.
//   - Transactions. SubmitTransaction takes TransactionActions of an
//     ActionType; NewBatch builds the same as a Batch, from entities or
//     structs. Up to MaxTransactionActions actions on one partition, all
//     or nothing.
//   - Indexes. Table.CreateIndex builds a secondary index (IndexSpec: 1
//     to 4 properties, optionally Partitioned or Unique) in the
//     background; Indexes lists them as IndexInfo with an IndexState,
//     DropIndex removes one, and Query.Index reads through a ready one.
//   - Change feed. Table.EnableChangeFeed (ChangeFeedOptions: retention,
//     ImageMode) records every committed change; Changes iterates over
//     them as Change values in commit order from a Cursor (CursorBeginning,
//     CursorNow, CursorAt, a Change's Cursor, ParseCursor), optionally
//     following new commits. Package replicate mirrors tables into any
//     store on top of it.
//   - Expiry. Table.SetTTL (TTL: a default lifetime or a per-entity
//     property) hides entities once they expire and a background sweeper
//     removes them; ExpiredCount counts those not yet removed.
//   - Bulk writes. Table.NewBulkWriter (BulkOptions) takes any
//     ActionEntity in any order of partitions and commits them in
//     batches that span partitions, with BulkStats and a *BulkError
//     naming a refused entity.
//   - Structs. MarshalEntity and UnmarshalEntity convert Go structs (tags
//     `table:"Name,omitempty"`); "Struct" in a name means typed: the
//     functions GetStruct, QueryStructs and QueryStructPage (StructPage)
//     read records straight into structs, and Table's InsertStruct,
//     UpdateStruct, UpsertStruct and DeleteStruct write them without a
//     property map, as does StructEntity(v) wherever writes are collected
//     (a TransactionAction, the Batch's verbs, a Partition's writes,
//     BulkWriter.Add).
//   - JSON. Entity's MarshalJSON and UnmarshalJSON speak Azure's wire
//     format, with odata.type annotations, as Azure's SDKs read it;
//     AppendEntityJSON writes it at any of Azure's three metadata levels
//     (JSONOptions), as the REST server does.
//   - Errors. Every failure is an *Error with Azure's code, one of the
//     edm.Code* constants (ErrorCode reads it); match with errors.Is
//     against the Err sentinels. A transaction
//     fails with a *BatchError naming the failing action's index. Bad input
//     is rejected before anything is read or written.
//   - Options. A nil *Options, or a zero field, means the default given in
//     the field's comment.
//   - Administration. DB.Checkpoint (a consistent copy of a live store),
//     Table.Stats (TableStats: estimates without reading), DB.Health,
//     DB.Check and CheckDir (a CheckReport of each damaged file)
//     and DB.EngineMetrics (the engine's figures, for monitoring).
//   - Encryption. Options.Encryption encrypts every file of a store at
//     rest (DB.Rekey rotates its key online, or re-encrypts every
//     file, DB.CheckpointEncrypted converts a store);
//     Options.PropertyEncryption seals chosen
//     properties before they reach any driver. See docs/encryption.md.
//
// Storage sits behind package driver: Open and OpenInMemory use the
// embedded engine, OpenDriver any other driver. Validation, conversion,
// paging and errors stay in this package, so code behaves the same on
// every driver.
//
// Concurrency: a DB and its Tables are safe for concurrent use. Writes to
// one partition (table, PartitionKey) serialize on a lock; reads take no
// lock and see committed data only. Entities returned to the caller are
// the caller's to keep and modify.
package tablestore
