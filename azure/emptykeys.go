package azure

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/streaming"
)

// Azure accepts "" as a PartitionKey, but aztables v1.4.1 refuses an empty
// partition key on the client side in every call that addresses an entity
// (get, update, merge, delete, and those actions in a transaction). The
// driver then hands aztables emptyPartitionKey in its place, and
// emptyKeyPolicy puts the empty key back into the request (the entity's
// path and its JSON body) before it is sent. Only calls whose partition
// key is "" carry the mark, so a real key equal to the placeholder is
// never rewritten.
const emptyPartitionKey = "tablestore-empty-partition-key-5e2a"

type emptyKeyMark struct{}

// sdkPartitionKey is the partition key to hand aztables for pk, and ctx
// marked for emptyKeyPolicy when pk is "".
func sdkPartitionKey(ctx context.Context, pk string) (context.Context, string) {
	if pk != "" {
		return ctx, pk
	}
	return context.WithValue(ctx, emptyKeyMark{}, true), emptyPartitionKey
}

var (
	emptyKeyPath   = "PartitionKey='" + emptyPartitionKey + "'"
	emptyKeyMember = []byte(`"PartitionKey":"` + emptyPartitionKey + `"`)
)

// emptyKeyPolicy restores the empty partition key in a marked request.
type emptyKeyPolicy struct{}

func (emptyKeyPolicy) Do(req *policy.Request) (*http.Response, error) {
	if marked, _ := req.Raw().Context().Value(emptyKeyMark{}).(bool); !marked {
		return req.Next()
	}
	u := req.Raw().URL
	u.Path = strings.ReplaceAll(u.Path, emptyKeyPath, "PartitionKey=''")
	u.RawPath = strings.ReplaceAll(u.RawPath, emptyKeyPath, "PartitionKey=''")
	if req.Body() != nil {
		body, err := io.ReadAll(req.Body())
		if err != nil {
			return nil, err
		}
		body = bytes.ReplaceAll(body, []byte(emptyKeyPath), []byte("PartitionKey=''"))
		body = bytes.ReplaceAll(body, emptyKeyMember, []byte(`"PartitionKey":""`))
		if err := req.SetBody(streaming.NopCloser(bytes.NewReader(body)), req.Raw().Header.Get("Content-Type")); err != nil {
			return nil, err
		}
	}
	return req.Next()
}
