package compat

import (
	"context"
	"fmt"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/tablestore/tablestore/tablestoretest"
)

// BenchmarkTestkitInsertGet is one aztables AddEntity and GetEntity,
// through InProcessClient and over the loopback listener.
func BenchmarkTestkitInsertGet(b *testing.B) {
	for _, mode := range []string{"inprocess", "loopback"} {
		b.Run(mode, func(b *testing.B) {
			srv := tablestoretest.NewServer(b)
			opts := &aztables.ClientOptions{}
			if mode == "inprocess" {
				opts.ClientOptions = policy.ClientOptions{Transport: srv.InProcessClient()}
			} else {
				opts.ClientOptions = policy.ClientOptions{Transport: srv.HTTPClient()}
			}
			svc, err := aztables.NewServiceClientFromConnectionString(srv.ConnectionString(), opts)
			if err != nil {
				b.Fatal(err)
			}
			c := svc.NewClient("bench")
			ctx := context.Background()
			if _, err := c.CreateTable(ctx, nil); err != nil {
				b.Fatal(err)
			}
			i := 0
			b.ReportAllocs()
			for b.Loop() {
				i++
				rk := fmt.Sprintf("r%08d", i)
				body := []byte(`{"PartitionKey":"p","RowKey":"` + rk + `","Name":"x","N":1}`)
				if _, err := c.AddEntity(ctx, body, nil); err != nil {
					b.Fatal(err)
				}
				if _, err := c.GetEntity(ctx, "p", rk, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
