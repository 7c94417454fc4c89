package orders

import (
	"fmt"
	"testing"
)

// Each parallel subtest has a server of its own: no shared tables, no
// ports to pick, nothing to clean up between them.
func TestParallelCustomers(t *testing.T) {
	for i := range 8 {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			t.Parallel()
			_, book := newBook(t)
			for n := range i + 1 {
				if err := book.Place(t.Context(), Order{Customer: "c", ID: fmt.Sprint(n)}); err != nil {
					t.Fatal(err)
				}
			}
			got, err := book.Orders(t.Context(), "c")
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != i+1 {
				t.Fatalf("%d orders, want %d: another test's writes leaked in", len(got), i+1)
			}
		})
	}
}
