package compat

import (
	"fmt"
	"sync"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
)

// Concurrent clients on one server: writers in their own partitions and a
// reader paging meanwhile; every write must land exactly once.
func TestServerConcurrentClients(t *testing.T) {
	_, svc := newService(t)
	c := newTable(t, svc)
	const writers, each = 8, 25
	var wg sync.WaitGroup
	errs := make(chan error, writers+1)
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < each; i++ {
				e := map[string]any{"PartitionKey": fmt.Sprintf("w%d", w), "RowKey": fmt.Sprintf("%03d", i), "N": i}
				if _, err := c.UpsertEntity(ctx(t), mustJSON(t, e), nil); err != nil {
					errs <- err
					return
				}
			}
		}(w)
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; i < 5; i++ {
			pager := c.NewListEntitiesPager(&aztables.ListEntitiesOptions{Top: to.Ptr[int32](10)})
			for pager.More() {
				if _, err := pager.NextPage(ctx(t)); err != nil {
					errs <- err
					return
				}
			}
		}
	}()
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	ents, _ := listAll(t, c, nil)
	if len(ents) != writers*each {
		t.Fatalf("%d entities, want %d", len(ents), writers*each)
	}
}

// BenchmarkServerBatchLoad loads entities through SubmitTransaction in
// batches of 100, over loopback HTTP with SharedKeyLite.
func BenchmarkServerBatchLoad(b *testing.B) {
	_, svc := newServiceB(b)
	c := svc.NewClient("bench")
	if _, err := c.CreateTable(b.Context(), nil); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		actions := make([]aztables.TransactionAction, 100)
		for j := range actions {
			e := map[string]any{"PartitionKey": fmt.Sprintf("p%d", i), "RowKey": fmt.Sprintf("%03d", j), "Name": "entity", "N": j, "F": 1.5}
			raw, _ := jsonMarshal(e)
			actions[j] = aztables.TransactionAction{ActionType: aztables.TransactionTypeAdd, Entity: raw}
		}
		if _, err := c.SubmitTransaction(b.Context(), actions, nil); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(100*b.N)/b.Elapsed().Seconds(), "entities/s")
}

// BenchmarkServerPaging pages through 10,000 entities, 1,000 a page.
func BenchmarkServerPaging(b *testing.B) {
	srv, svc := newServiceB(b)
	c := svc.NewClient("bench")
	if _, err := c.CreateTable(b.Context(), nil); err != nil {
		b.Fatal(err)
	}
	tb := srv.DB().Table("bench")
	for p := 0; p < 100; p++ {
		if err := seedDirect(b, tb, p); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	n := 0
	for i := 0; i < b.N; i++ {
		pager := c.NewListEntitiesPager(&aztables.ListEntitiesOptions{Top: to.Ptr[int32](1000)})
		for pager.More() {
			p, err := pager.NextPage(b.Context())
			if err != nil {
				b.Fatal(err)
			}
			n += len(p.Entities)
		}
	}
	if n != 10000*b.N {
		b.Fatalf("paged %d entities", n)
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "entities/s")
}
