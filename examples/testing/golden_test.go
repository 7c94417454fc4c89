package orders

import (
	"os"
	"testing"
)

// The test loads a fixture (JSON lines as `tablestore export` writes
// them), places orders through the code under test, and compares the
// table with a golden file; go test -tablestoretest.update rewrites it.
func TestPlaceGolden(t *testing.T) {
	srv, book := newBook(t)
	f, err := os.Open("testdata/orders.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	srv.Load("orders", f)
	for _, o := range []Order{
		{Customer: "bob", ID: "7", Item: "chair", Quantity: 4, Price: 25.5},
		{Customer: "ada", ID: "9", Item: "desk", Quantity: 1, Price: 120},
	} {
		if err := book.Place(t.Context(), o); err != nil {
			t.Fatal(err)
		}
	}
	srv.Golden(t, "orders", "testdata/orders.golden.jsonl")
}
