// Package azure is tablestore's remote driver: the same tablestore.DB API
// over a service that speaks the Azure Tables REST protocol (Azure Table
// Storage, Cosmos DB for Table, Azurite, or tablestore's own server),
// through the official Azure SDK for Go (aztables and azcore, which bring
// retries and the shared key, SAS and Microsoft Entra ID credentials).
//
//	db, err := azure.Open(os.Getenv("TABLESTORE_CONNECTION_STRING"), nil)
//	// or azure.OpenEndpoint("https://acct.table.core.windows.net", cred, nil)
//	defer db.Close()
//	people, err := db.CreateTable(ctx, "People") // the same code as embedded
//
// The root package checks every input before it reaches this driver
// (names, keys, properties, Azure's limits, $filter, transactions), so a
// request the embedded engine rejects is rejected the same way here,
// without a round trip. The driver maps Azure's error codes onto the
// library's codes and sentinels (errors.go), Azure's continuation headers
// onto the library's continuation tokens (position.go), and entity group
// transactions onto SubmitTransaction with the failing action's index
// (batch.go). Requests to tablestore's extension endpoints (change
// feeds, indexes, TTL, range deletions, stats) retry under
// Options.Client.Retry as the SDK's requests do, where sending one twice
// is safe (retry.go).
//
// What differs from the embedded engine, and why, is listed in the
// repository's docs/drivers.md: results unordered on Cosmos DB for Table,
// its 2 MiB transaction limit, TableBeingDeleted for about 40 s after a
// table is deleted, pages that end early, and table deletes that are not
// instant.
//
// This package is its own module, so programs that only embed tablestore
// never download the Azure SDK.
package azure
