// Package orders is the code under test of the tablestoretest examples:
// a small order book kept in Azure Table Storage through aztables. Its
// tests (retry_test.go, ttl_test.go, golden_test.go, parallel_test.go)
// show how to test such code against tablestoretest's in-process server:
// injected ServerBusy answers the SDK retries through, a TTL driven by the
// test clock, golden files, and parallel tests each with a server of
// their own.
//
// Run them from this directory:
//
//	go test ./...
//	go test ./... -tablestoretest.update   # rewrite testdata/*.golden.jsonl
package orders

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
)

// Order is one order of a customer.
type Order struct {
	Customer string  `json:"PartitionKey"`
	ID       string  `json:"RowKey"`
	Item     string  `json:"Item"`
	Quantity int32   `json:"Quantity"`
	Price    float64 `json:"Price"`
}

// Book keeps orders in one table, a partition per customer.
type Book struct {
	c *aztables.Client
}

// NewBook returns a Book over the table client c.
func NewBook(c *aztables.Client) *Book { return &Book{c: c} }

// Place stores a new order; an order with the same ID for the customer
// is an error.
func (b *Book) Place(ctx context.Context, o Order) error {
	body, err := json.Marshal(o)
	if err != nil {
		return err
	}
	_, err = b.c.AddEntity(ctx, body, nil)
	return err
}

// Orders lists a customer's orders in ID order, following every page.
func (b *Book) Orders(ctx context.Context, customer string) ([]Order, error) {
	filter := fmt.Sprintf("PartitionKey eq '%s'", customer)
	pager := b.c.NewListEntitiesPager(&aztables.ListEntitiesOptions{Filter: &filter})
	var out []Order
	for pager.More() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			return nil, err
		}
		for _, raw := range page.Entities {
			var o Order
			if err := json.Unmarshal(raw, &o); err != nil {
				return nil, err
			}
			out = append(out, o)
		}
	}
	return out, nil
}
