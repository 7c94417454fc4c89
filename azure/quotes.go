package azure

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/streaming"
	"github.com/tablestore/tablestore/driver"
)

// aztables v1.4.1 writes the sub-request URLs of a transaction,
// (PartitionKey='…',RowKey='…'), without doubling the single quotes in the
// keys, as OData literals need and as its single-entity calls do. A key
// holding ' then makes the service refuse the whole transaction.
// quotePolicy rewrites those URLs in the $batch body before it is sent,
// for the actions the call's context names.
type quotePolicy struct{}

type quoteKey struct{}

// withQuotedKeys marks ctx's $batch call as carrying actions, in order.
// It returns ctx unchanged when no key holds a quote.
func withQuotedKeys(ctx context.Context, actions []driver.Action) context.Context {
	for _, a := range actions {
		if strings.Contains(a.PartitionKey, "'") || strings.Contains(a.RowKey, "'") {
			return context.WithValue(ctx, quoteKey{}, actions)
		}
	}
	return ctx
}

func (quotePolicy) Do(req *policy.Request) (*http.Response, error) {
	actions, ok := req.Raw().Context().Value(quoteKey{}).([]driver.Action)
	if !ok || !strings.HasSuffix(req.Raw().URL.Path, "/$batch") || req.Body() == nil {
		return req.Next()
	}
	body, err := io.ReadAll(req.Body())
	if err != nil {
		return nil, err
	}
	body = quoteKeys(body, actions)
	if err := req.SetBody(streaming.NopCloser(bytes.NewReader(body)), req.Raw().Header.Get("Content-Type")); err != nil {
		return nil, err
	}
	return req.Next()
}

// quoteKeys rewrites, in order, each addressed action's entity path in a
// changeset body from the form aztables writes to the OData form.
func quoteKeys(body []byte, actions []driver.Action) []byte {
	from := 0
	for _, a := range actions {
		if a.Type == driver.ActionInsert {
			continue // posted to the table: no keys in the URL
		}
		old := entityPath(a.PartitionKey, a.RowKey)
		i := bytes.Index(body[from:], old)
		if i < 0 {
			continue
		}
		i += from
		fixed := entityPath(strings.ReplaceAll(a.PartitionKey, "'", "''"), strings.ReplaceAll(a.RowKey, "'", "''"))
		body = append(body[:i:i], append(fixed, body[i+len(old):]...)...)
		from = i + len(fixed)
	}
	return body
}

func entityPath(pk, rk string) []byte {
	return []byte("(PartitionKey='" + url.PathEscape(pk) + "',RowKey='" + url.PathEscape(rk) + "')")
}
