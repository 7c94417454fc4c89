// Package replicate mirrors tables of a local store into any store, one
// way: Azure Table Storage, Cosmos DB for Table, Azurite, a tablestore
// server (through the remote driver) or another local store. It is built
// on the public API only: a copy of each table, then its change feed.
//
// For a table with no saved position, Run turns the table's feed on with
// ImagesNew when it is off (a feed of keys only is InvalidInput), creates
// the target table if needed and empties it, takes the feed's end as its
// position, copies every entity (upserts that replace), saves the
// position, and then applies the feed from that position; changes made
// during the copy are applied again, to no effect.
//
// Each change is applied as an idempotent write: the new entity replaces
// (Upsert with Replace), a delete and an expiry (ChangeExpire) delete,
// ignoring absence, and a range deletion deletes the range at the target
// (Partition.DeleteRange, which on a remote store queries and deletes in
// transactions: not atomic there). The upserts of one source commit to
// one partition go in entity group transactions of up to 100. The
// source's TTL settings are not copied: an entity that expires at the
// source leaves the target when its removal reaches the feed (the
// sweeper's commit, or a write over it), so until then the target still
// shows it. A deleted source table ends its replication (the target is
// left as it is).
//
// Positions are saved after the changes they cover are applied, so a
// replicator that is killed and started again resumes where it saved,
// repeating a few changes to no effect and losing or reordering none.
// Errors the target may not repeat (ServerBusy, OperationTimedOut,
// InternalError, a refused or reset connection) are retried with a
// backoff; any other ends Run with a *ChangeError naming the change.
//
// The tables are replicated concurrently, one goroutine each; Positions
// and OnProgress are called from those goroutines. See docs/changes.md.
package replicate
