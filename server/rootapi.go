package server

import (
	"github.com/tablestore/tablestore"
	"github.com/tablestore/tablestore/internal/rootapi"
)

// root is what the library offers the server beyond its public API: the
// reads that write Azure's JSON straight from stored records (Get Entity,
// Query Entities) and the stored service properties document.
var root = rootapi.Get[*tablestore.DB, *tablestore.Table, tablestore.Query, *tablestore.Page, tablestore.JSONOptions, tablestore.TransactionAction]()
