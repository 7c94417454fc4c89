package compat

import (
	"net/http"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/tablestore/tablestore/tablestoretest"
)

// TestCORSThroughSDK sets a CORS rule with ServiceClient.SetProperties,
// reads it back, and checks that a browser's preflight and cross-origin
// request get Azure's CORS answers.
func TestCORSThroughSDK(t *testing.T) {
	srv := tablestoretest.NewServer(t)
	svc, err := aztables.NewServiceClientFromConnectionString(srv.ConnectionString(), nil)
	if err != nil {
		t.Fatal(err)
	}
	preflight := func(origin string) *http.Response {
		req, _ := http.NewRequest("OPTIONS", srv.URL()+"/devstoreaccount1/Tables", nil)
		req.Header.Set("Origin", origin)
		req.Header.Set("Access-Control-Request-Method", "POST")
		req.Header.Set("Access-Control-Request-Headers", "content-type,x-ms-date,authorization")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	if resp := preflight("http://spa.example"); resp.StatusCode != http.StatusForbidden {
		t.Fatalf("preflight before any rule: %d", resp.StatusCode)
	}
	_, err = svc.SetProperties(ctx(t), aztables.ServiceProperties{
		Cors: []*aztables.CorsRule{{
			AllowedOrigins:  to.Ptr("http://spa.example"),
			AllowedMethods:  to.Ptr("GET,POST,PUT,MERGE,PATCH,DELETE"),
			AllowedHeaders:  to.Ptr("*"),
			ExposedHeaders:  to.Ptr("*"),
			MaxAgeInSeconds: to.Ptr(int32(60)),
		}},
		Logging: &aztables.Logging{Version: to.Ptr("1.0"), Read: to.Ptr(true), Write: to.Ptr(true), Delete: to.Ptr(false),
			RetentionPolicy: &aztables.RetentionPolicy{Enabled: to.Ptr(true), Days: to.Ptr(int32(3))}},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	props, err := svc.GetProperties(ctx(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(props.Cors) != 1 || *props.Cors[0].AllowedOrigins != "http://spa.example" || *props.Cors[0].MaxAgeInSeconds != 60 ||
		props.Logging == nil || *props.Logging.RetentionPolicy.Days != 3 {
		t.Fatalf("%+v", props)
	}
	resp := preflight("http://spa.example")
	if resp.StatusCode != 200 || resp.Header.Get("Access-Control-Allow-Origin") != "http://spa.example" ||
		resp.Header.Get("Access-Control-Max-Age") != "60" {
		t.Fatalf("preflight: %d %v", resp.StatusCode, resp.Header)
	}
	if resp := preflight("http://evil.example"); resp.StatusCode != http.StatusForbidden || resp.Header.Get("Access-Control-Allow-Origin") != "" {
		t.Fatalf("preflight from another origin: %d %v", resp.StatusCode, resp.Header)
	}
}
