package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/tablestore/tablestore"
	"github.com/tablestore/tablestore/server"
)

// A store served over Azure's Table REST API inside a test, with
// net/http/httptest. Anonymous turns authentication off, so plain HTTP
// requests are enough here; an Azure SDK would sign its requests with
// server.DevAccount and server.DevKey, the defaults (see
// tablestoretest.NewServer for a ready-made server and connection string).
func ExampleNew() {
	ctx := context.Background()
	db, err := tablestore.OpenInMemory(nil)
	if err != nil {
		panic(err)
	}
	defer db.Close()
	h, err := server.New(db, &server.Options{Anonymous: true})
	if err != nil {
		panic(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()

	// call sends one request and prints its status, then Azure's error
	// code or the JSON body without the Timestamp (which varies).
	call := func(method, path, body string) {
		req, err := http.NewRequestWithContext(ctx, method,
			srv.URL+"/"+server.DevAccount+path, strings.NewReader(body))
		if err != nil {
			panic(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json;odata=nometadata")
		req.Header.Set("Prefer", "return-no-content")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			panic(err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			panic(err)
		}
		out := fmt.Sprint(resp.StatusCode)
		var v map[string]any
		if code := resp.Header.Get("x-ms-error-code"); code != "" {
			out += " " + code
		} else if json.Unmarshal(b, &v) == nil {
			delete(v, "Timestamp")
			b, _ = json.Marshal(v) // keys in order
			out += " " + string(b)
		}
		fmt.Println(out)
	}

	call("POST", "/Tables", `{"TableName":"People"}`)
	call("POST", "/People", `{"PartitionKey":"Sales","RowKey":"0042","Name":"Ana","Age":41}`)
	call("POST", "/People", `{"PartitionKey":"Sales","RowKey":"0042"}`)
	call("GET", "/People(PartitionKey='Sales',RowKey='0042')?$select=Name", "")

	// What the server wrote is in the store behind it.
	e, err := db.Table("People").Get(ctx, "Sales", "0042", nil)
	if err != nil {
		panic(err)
	}
	fmt.Printf("%T %v\n", e.Properties["Age"], e.Properties["Age"])
	// Output:
	// 204
	// 204
	// 409 EntityAlreadyExists
	// 200 {"Name":"Ana","PartitionKey":"Sales","RowKey":"0042"}
	// int32 41
}
