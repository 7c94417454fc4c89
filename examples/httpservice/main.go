// Command httpservice is a small HTTP service on tablestore: Go structs in
// and out (MarshalEntity, UnmarshalEntity), user input put into a filter
// with filter.Build (typed, so it cannot change the filter's shape), and a
// handler that returns one page plus the token for the next. main_test.go
// tests the handlers on an in-memory store.
//
// The program starts the service on a loopback port, adds orders through
// it, pages through them, tries a filter injection, and checks each
// answer.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/tablestore/tablestore/examples/internal/demo"
)

func main() {
	ctx := context.Background()
	db, _ := demo.Open()
	orders, err := db.CreateTableIfNotExists(ctx, "Orders")
	demo.NoErr(err, "create table Orders")
	again, err := db.CreateTableIfNotExists(ctx, "Orders")
	demo.NoErr(err, "create table Orders again")
	demo.Check(again.Name() == "Orders", "second CreateTableIfNotExists returned %q", again.Name())

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	demo.NoErr(err, "listen on loopback")
	srv := &http.Server{Handler: (&service{orders: orders}).routes(), ReadHeaderTimeout: 5 * time.Second}
	go srv.Serve(ln)
	demo.Defer(func() { srv.Close() })
	base := "http://" + ln.Addr().String()
	client := &http.Client{Timeout: 10 * time.Second}

	demo.Step("add 25 orders for O'Brien and 5 for Smith through POST")
	placed := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	for i := range 30 {
		customer := "O'Brien"
		if i >= 25 {
			customer = "Smith"
		}
		body := fmt.Sprintf(`{"id":"order%03d","amount":%d,"placed":%q}`, i, 10*i, placed.Add(time.Duration(i)*time.Hour).Format(time.RFC3339))
		resp, err := client.Post(base+"/customers/"+url.PathEscape(customer)+"/orders", "application/json", strings.NewReader(body))
		demo.NoErr(err, "POST order")
		resp.Body.Close()
		demo.Check(resp.StatusCode == http.StatusCreated, "POST order %d: status %d", i, resp.StatusCode)
		demo.Check(strings.HasPrefix(resp.Header.Get("ETag"), `W/"datetime'`), "POST order %d: ETag %q", i, resp.Header.Get("ETag"))
	}
	demo.Say("30 orders stored")

	get := func(customer, query string) (ordersPage, int) {
		resp, err := client.Get(base + "/customers/" + url.PathEscape(customer) + "/orders?" + query)
		demo.NoErr(err, "GET orders")
		defer resp.Body.Close()
		var page ordersPage
		if resp.StatusCode == http.StatusOK {
			demo.NoErr(json.NewDecoder(resp.Body).Decode(&page), "decode page")
		}
		return page, resp.StatusCode
	}

	demo.Step("page through O'Brien's orders of at least 50, 8 per page")
	var ids []string
	next := ""
	for pages := 1; pages <= 10; pages++ {
		q := url.Values{"min": {"50"}, "top": {"8"}}
		if next != "" {
			q.Set("next", next)
		}
		page, status := get("O'Brien", q.Encode())
		demo.Check(status == http.StatusOK, "GET page %d: status %d", pages, status)
		for _, o := range page.Orders {
			demo.Check(o.Customer == "O'Brien" && o.Amount >= 50, "page %d holds %+v", pages, o)
			ids = append(ids, o.ID)
		}
		demo.Say("page %d: %d orders, next token: %v", pages, len(page.Orders), page.Next != "")
		if next = page.Next; next == "" {
			break
		}
	}
	demo.Check(next == "", "more than 10 pages")
	demo.Check(len(ids) == 20 && ids[0] == "order005" && ids[19] == "order024", "got orders %v, want order005..order024", ids)

	demo.Step("a customer name that tries to widen the filter matches nothing")
	page, status := get("x' or PartitionKey ne 'x", "")
	demo.Check(status == http.StatusOK && len(page.Orders) == 0, "injection: status %d, %d orders", status, len(page.Orders))
	demo.Say("status %d, %d orders: the name stayed one string literal", status, len(page.Orders))

	demo.Step("bad input is a 4xx")
	_, status = get("Smith", "min=lots")
	demo.Check(status == http.StatusBadRequest, "min=lots: status %d", status)
	_, status = get("Smith", "next=forged")
	demo.Check(status == http.StatusBadRequest, "forged token: status %d", status)
	demo.Say("non-numeric min and a forged token both answer 400")

	demo.Done()
}
