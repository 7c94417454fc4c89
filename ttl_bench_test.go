package tablestore

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// BenchmarkTTLRead compares point gets and 1000-entity pages on a table
// with TTL settings (nothing expired) and on the same table without.
func BenchmarkTTLRead(b *testing.B) {
	ctx := context.Background()
	for _, withTTL := range []bool{false, true} {
		db, err := OpenInMemory(&Options{NoSync: true})
		require.NoError(b, err)
		tb, err := db.CreateTable(ctx, "Bench")
		require.NoError(b, err)
		w, err := tb.NewBulkWriter(nil)
		require.NoError(b, err)
		const n = 10_000
		for i := range n {
			require.NoError(b, w.Add(ctx, ent(fmt.Sprintf("p%02d", i%50), fmt.Sprintf("r%05d", i),
				map[string]any{"S": "some text", "V": int32(i), "ExpiresAt": time.Now().Add(time.Hour)})))
		}
		require.NoError(b, w.Flush(ctx))
		if withTTL {
			require.NoError(b, tb.SetTTL(ctx, TTL{Default: time.Hour, Property: "ExpiresAt"}))
		}
		b.Run(fmt.Sprintf("get/ttl=%v", withTTL), func(b *testing.B) {
			i := 0
			for b.Loop() {
				if _, err := tb.Get(ctx, fmt.Sprintf("p%02d", i%50), fmt.Sprintf("r%05d", i%n), nil); err != nil {
					b.Fatal(err)
				}
				i += 7
			}
		})
		b.Run(fmt.Sprintf("page/ttl=%v", withTTL), func(b *testing.B) {
			for b.Loop() {
				p, err := tb.QueryPage(ctx, Query{Top: 1000})
				if err != nil || len(p.Entities) != 1000 {
					b.Fatal(err)
				}
			}
		})
		require.NoError(b, db.Close())
	}
}
