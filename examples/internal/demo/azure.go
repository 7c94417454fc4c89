//go:build tablestore_azure

package demo

import (
	"github.com/tablestore/tablestore"
	"github.com/tablestore/tablestore/azure"
)

func init() {
	openRemote = func(cs string) (*tablestore.DB, error) { return azure.Open(cs, nil) }
}
