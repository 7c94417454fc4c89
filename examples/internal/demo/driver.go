package demo

import (
	"os"

	"github.com/tablestore/tablestore"
)

// The examples run on the embedded engine, or, with
//
//	TABLESTORE_DRIVER=azure TABLESTORE_CONNECTION_STRING='...' \
//	    go run -tags tablestore_azure ./examples/quickstart
//
// on the remote driver of module github.com/tablestore/tablestore/azure
// (Azure Table Storage, Cosmos DB for Table, Azurite or tablestore serve).
// The tag keeps the Azure SDK out of the root module's builds; the
// repository's go.work resolves the azure module. Every program is the
// same either way: only Open and Reopen look at the variable. A remote
// store outlives the program, so run each example against an empty
// account.

// openRemote opens the remote store; the tablestore_azure build sets it.
var openRemote func(connectionString string) (*tablestore.DB, error)

// openStore opens the store the environment picks: the embedded one in
// dir, or the remote one (dir unused).
func openStore(dir string) (*tablestore.DB, error) {
	switch d := os.Getenv("TABLESTORE_DRIVER"); d {
	case "", "embedded":
		return tablestore.Open(dir, nil)
	case "azure":
		if openRemote == nil {
			Fail("TABLESTORE_DRIVER=azure needs a build with -tags tablestore_azure")
		}
		return openRemote(os.Getenv("TABLESTORE_CONNECTION_STRING"))
	default:
		Fail("unknown TABLESTORE_DRIVER %q: want embedded or azure", d)
	}
	return nil, nil
}
