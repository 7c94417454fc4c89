package azure

import (
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	ts "github.com/tablestore/tablestore"
	"github.com/tablestore/tablestore/edm"
	"github.com/tablestore/tablestore/filter"
)

// Options configure a remote DB. A nil *Options, and every zero field,
// means the default given in the field's comment.
type Options struct {
	// Client configures the SDK's HTTP pipeline: retries, transport,
	// logging, telemetry. Default: azcore's (three retries with
	// exponential backoff on 408, 429, 500, 502, 503 and 504, and on
	// transport errors). Requests to tablestore's extension endpoints
	// use its Transport and Retry too, retrying only where idempotent.
	Client azcore.ClientOptions

	// CreateTableWait is how long CreateTable keeps trying, every two
	// seconds, while the service answers TableBeingDeleted (Azure does for
	// about 40 s after a table of that name was deleted). Default: 0,
	// return ErrTableBeingDeleted at once.
	CreateTableWait time.Duration

	// FilterLimits bound the size of $filter expressions, checked before
	// a query is sent. Default: filter.DefaultLimits.
	FilterLimits *filter.Limits

	// PropertyEncryption encrypts chosen properties of chosen tables
	// before they are sent, so the service stores only their ciphertext
	// (see tablestore.PropertyEncryption). Default: nil.
	PropertyEncryption *ts.PropertyEncryption
}

// developmentStorage is what "UseDevelopmentStorage=true" stands for:
// Azurite's well-known account on its default table port.
const developmentStorage = "DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;" +
	"AccountKey=Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==;" +
	"TableEndpoint=http://127.0.0.1:10002/devstoreaccount1;"

// Open returns a DB over the Azure Table service a connection string
// names: Azure Table Storage, Cosmos DB for Table, Azurite or tablestore's
// own server. It accepts the strings the Azure portal gives
// (AccountName and AccountKey, with EndpointSuffix or TableEndpoint; or
// TableEndpoint and SharedAccessSignature) and "UseDevelopmentStorage=true"
// for Azurite on 127.0.0.1:10002. Open sends nothing: a wrong key or an
// unreachable endpoint shows at the first operation.
//
// The DB behaves as an embedded one, with the differences the README's
// "Embedded and remote drivers" section lists. Against tablestore's own
// server (tablestore serve), found from its capability document at the
// first operation that needs it, change feeds (Follow included),
// secondary indexes, TTL, range deletions (Partition.DeleteAll and
// DeleteRange) and Table.Stats work too, through the server's extension
// endpoints; elsewhere they answer NotImplemented. It is safe for concurrent
// use; Close waits for operations in flight.
//
// Errors: InvalidInput for a malformed connection string.
func Open(connectionString string, opts *Options) (*ts.DB, error) {
	if strings.EqualFold(strings.TrimSuffix(strings.TrimSpace(connectionString), ";"), "UseDevelopmentStorage=true") {
		connectionString = developmentStorage
	}
	svc, err := aztables.NewServiceClientFromConnectionString(connectionString, clientOptions(opts))
	if err != nil {
		return nil, invalidInput("connection string: %v", err)
	}
	return openDB(svc, isCosmos(connectionString), extFromConnectionString(connectionString, opts), opts)
}

// OpenEndpoint returns a DB over the Azure Table service at endpoint, such
// as https://account.table.core.windows.net or, path-style,
// http://127.0.0.1:10002/devstoreaccount1. cred is one of:
//   - *aztables.SharedKeyCredential (the account name and key);
//   - an azcore.TokenCredential, for Microsoft Entra ID (for example from
//     azidentity.NewDefaultAzureCredential); the SDK sends tokens only
//     over https;
//   - nil, when endpoint carries a SAS token in its query string, or the
//     service needs no authorization.
//
// Errors: InvalidInput for a malformed endpoint or another credential
// type. Otherwise as Open.
func OpenEndpoint(endpoint string, cred any, opts *Options) (*ts.DB, error) {
	// The SDK takes any string and fails only on first use; the query
	// (a SAS) stays out of the message.
	shown, _, _ := strings.Cut(endpoint, "?")
	if u, err := url.Parse(endpoint); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, invalidInput("endpoint %q is not an http or https URL with a host", shown)
	}
	var (
		svc *aztables.ServiceClient
		err error
		ext *extClient
	)
	switch c := cred.(type) {
	case nil:
		svc, err = aztables.NewServiceClientWithNoCredential(endpoint, clientOptions(opts))
		ext = newExtClient(endpoint, "", nil, "", nil, opts)
	case *aztables.SharedKeyCredential:
		svc, err = aztables.NewServiceClientWithSharedKey(endpoint, c, clientOptions(opts))
		ext = newExtClient(endpoint, c.AccountName(), nil, "", nil, opts)
		if ext != nil {
			// The credential keeps its key to itself but signs an
			// account SAS, which the extension requests carry.
			ext.signSAS = accountSASSigner(c, ext.root.Scheme)
		}
	case azcore.TokenCredential:
		svc, err = aztables.NewServiceClient(endpoint, c, clientOptions(opts))
		ext = newExtClient(endpoint, "", nil, "", c, opts)
	default:
		return nil, invalidInput("credential of type %T: want *aztables.SharedKeyCredential, azcore.TokenCredential or nil", cred)
	}
	if err != nil {
		return nil, invalidInput("endpoint %q: %v", shown, err)
	}
	return openDB(svc, isCosmos(endpoint), ext, opts)
}

// accountSASSigner signs, with cred, account SASs allowing every
// operation on every resource type of the table service, over https or,
// for an http endpoint, either protocol.
func accountSASSigner(cred *aztables.SharedKeyCredential, scheme string) func(start, expiry time.Time) (url.Values, error) {
	protocol := aztables.SASProtocolHTTPS
	if scheme == "http" {
		protocol = aztables.SASProtocolHTTPSandHTTP
	}
	perms := aztables.AccountSASPermissions{Read: true, Write: true, Delete: true, List: true, Add: true, Create: true, Update: true}
	return func(start, expiry time.Time) (url.Values, error) {
		qp, err := aztables.AccountSASSignatureValues{
			Protocol: protocol, StartTime: start, ExpiryTime: expiry,
			Permissions: perms.String(), Services: "t", ResourceTypes: "sco",
		}.Sign(cred)
		if err != nil {
			return nil, err
		}
		return url.ParseQuery(qp.Encode())
	}
}

func openDB(svc *aztables.ServiceClient, cosmos bool, ext *extClient, opts *Options) (*ts.DB, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	c := &conn{svc: svc, cosmos: cosmos, createWait: o.CreateTableWait, ext: ext, done: make(chan struct{})}
	return ts.OpenDriver(c, &ts.Options{FilterLimits: o.FilterLimits, PropertyEncryption: o.PropertyEncryption})
}

func clientOptions(opts *Options) *aztables.ClientOptions {
	co := &aztables.ClientOptions{}
	if opts != nil {
		co.ClientOptions = opts.Client
	}
	co.PerCallPolicies = append(append([]policy.Policy(nil), co.PerCallPolicies...), emptyKeyPolicy{}, quotePolicy{})
	return co
}

// isCosmos reports whether an endpoint (or a connection string holding
// one) is Cosmos DB for Table's, by the rule aztables applies: a
// .table.cosmos. or .table.cosmosdb. host, or the Cosmos emulator
// (localhost, port 8902).
func isCosmos(s string) bool {
	s = strings.ToLower(s)
	return strings.Contains(s, ".table.cosmos.") || strings.Contains(s, ".table.cosmosdb.") ||
		(strings.Contains(s, "localhost") && strings.Contains(s, "8902"))
}

func invalidInput(format string, args ...any) error {
	return &ts.Error{Code: edm.CodeInvalidInput, Message: "azure: " + fmt.Sprintf(format, args...)}
}
