package main

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/tablestore/tablestore"
	"github.com/tablestore/tablestore/filter"
)

// Order is the stored shape of one order: the customer is the partition,
// the order ID the row.
type Order struct {
	Customer string          `table:"PartitionKey" json:"customer"`
	ID       string          `table:"RowKey" json:"id"`
	Amount   int32           `json:"amount"`
	Placed   time.Time       `table:",omitempty" json:"placed"`
	Note     string          `table:",omitempty" json:"note,omitempty"`
	Version  tablestore.ETag `json:"-"` // the entity's ETag
}

// ordersPage is the body of GET /orders: one page and the token for the
// next ("" on the last page).
type ordersPage struct {
	Orders []Order `json:"orders"`
	Next   string  `json:"next,omitempty"`
}

// service serves a customer's orders from one table.
type service struct {
	orders *tablestore.Table
}

func (s *service) routes() *http.ServeMux {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /customers/{customer}/orders", s.listOrders)
	mux.HandleFunc("POST /customers/{customer}/orders", s.addOrder)
	return mux
}

// listOrders returns one page of a customer's orders with an amount of at
// least ?min=, at most ?top= of them, resuming at ?next=.
func (s *service) listOrders(w http.ResponseWriter, r *http.Request) {
	minAmount, err := strconv.ParseInt(r.FormValue("min"), 10, 32)
	if r.FormValue("min") == "" {
		minAmount, err = 0, nil
	}
	if err != nil {
		http.Error(w, "min must be a 32-bit integer", http.StatusBadRequest)
		return
	}
	top := 20
	if v := r.FormValue("top"); v != "" {
		if top, err = strconv.Atoi(v); err != nil || top < 1 || top > 1000 {
			http.Error(w, "top must be 1 to 1000", http.StatusBadRequest)
			return
		}
	}
	// User input enters the filter only as typed literals.
	f, err := filter.Build("PartitionKey eq %s and Amount ge %s", r.PathValue("customer"), int32(minAmount))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	page, err := s.orders.QueryPage(r.Context(), tablestore.Query{Filter: f, Top: top, Continuation: r.FormValue("next")})
	if err != nil {
		writeError(w, err)
		return
	}
	out := ordersPage{Orders: make([]Order, 0, len(page.Entities)), Next: page.Continuation}
	for _, e := range page.Entities {
		var o Order
		if err := tablestore.UnmarshalEntity(e, &o); err != nil {
			writeError(w, err)
			return
		}
		out.Orders = append(out.Orders, o)
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(out)
}

// addOrder stores the order in the body for the customer in the path.
func (s *service) addOrder(w http.ResponseWriter, r *http.Request) {
	var o Order
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<16)).Decode(&o); err != nil {
		http.Error(w, "body must be an order in JSON", http.StatusBadRequest)
		return
	}
	o.Customer = r.PathValue("customer")
	e, err := tablestore.MarshalEntity(o)
	if err != nil {
		writeError(w, err)
		return
	}
	if err := s.orders.Insert(r.Context(), e); err != nil {
		writeError(w, err)
		return
	}
	w.Header().Set("ETag", string(e.ETag))
	w.WriteHeader(http.StatusCreated)
}

// writeError maps the store's typed errors to HTTP statuses.
func writeError(w http.ResponseWriter, err error) {
	status := http.StatusInternalServerError
	switch {
	case errors.Is(err, tablestore.ErrEntityAlreadyExists):
		status = http.StatusConflict
	case errors.Is(err, tablestore.ErrTableNotFound), errors.Is(err, tablestore.ErrResourceNotFound):
		status = http.StatusNotFound
	case tablestore.ErrorCode(err) != "":
		status = http.StatusBadRequest // the remaining codes describe bad input
	}
	http.Error(w, err.Error(), status)
}
