package orders

import (
	"testing"

	"github.com/tablestore/tablestore/tablestoretest"
)

// The server answers the first two inserts 503 ServerBusy, as Azure does
// under load; aztables retries, and Place succeeds on the third try.
func TestPlaceRetriesServerBusy(t *testing.T) {
	srv, book := newBook(t)
	srv.InjectFault(tablestoretest.Fault{Operation: "InsertEntity", Code: "ServerBusy", Times: 2})
	if err := book.Place(t.Context(), Order{Customer: "ada", ID: "1", Item: "lamp", Quantity: 1}); err != nil {
		t.Fatalf("Place: %v", err)
	}
	var tries int
	for _, r := range srv.Requests() {
		if r.Operation == "InsertEntity" {
			tries++
		}
	}
	if tries != 3 {
		t.Fatalf("%d InsertEntity requests, want 3 (two refused, one retried through)", tries)
	}
}

// A query whose pages come back empty or cut at partition boundaries
// must still list every order: Orders follows continuations.
func TestOrdersFollowsContinuations(t *testing.T) {
	srv, book := newBook(t)
	for _, id := range []string{"1", "2", "3"} {
		if err := book.Place(t.Context(), Order{Customer: "ada", ID: id, Item: "pen"}); err != nil {
			t.Fatal(err)
		}
	}
	srv.InjectFault(tablestoretest.Fault{Operation: "QueryEntities", Page: tablestoretest.PageEmpty, Times: 1})
	srv.InjectFault(tablestoretest.Fault{Operation: "QueryEntities", Page: tablestoretest.PageShort})
	got, err := book.Orders(t.Context(), "ada")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 {
		t.Fatalf("%d orders, want 3", len(got))
	}
}
