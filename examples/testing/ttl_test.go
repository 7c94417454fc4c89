package orders

import (
	"testing"
	"time"

	"github.com/tablestore/tablestore"
)

// Orders expire a day after they are placed (a table TTL, set through
// the library since Azure's API has none); the test moves the server's
// clock instead of waiting.
func TestOrdersExpire(t *testing.T) {
	srv, book := newBook(t)
	if err := srv.DB().Table("orders").SetTTL(t.Context(), tablestore.TTL{Default: 24 * time.Hour}); err != nil {
		t.Fatal(err)
	}
	if err := book.Place(t.Context(), Order{Customer: "ada", ID: "1", Item: "lamp"}); err != nil {
		t.Fatal(err)
	}
	srv.Clock().Advance(23 * time.Hour)
	if got, err := book.Orders(t.Context(), "ada"); err != nil || len(got) != 1 {
		t.Fatalf("after 23h: %v, %v", got, err)
	}
	srv.Clock().Advance(2 * time.Hour)
	if got, err := book.Orders(t.Context(), "ada"); err != nil || len(got) != 0 {
		t.Fatalf("after 25h: %v, %v (want none: expired)", got, err)
	}
}
