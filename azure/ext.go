package azure

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/tablestore/tablestore/driver"
	"github.com/tablestore/tablestore/edm"
)

// tablestore's own server offers, beside Azure's API, extension
// endpoints under {service root}/$tablestore/ (see the server's
// docs/extensions.md): change feeds, indexes, TTL, range deletions and size
// estimates. The driver reads the capability document,
// GET {root}$tablestore, once, at the first operation that needs it; a
// service that does not answer it as tablestore's server (Azure,
// Azurite, Cosmos DB) gets NotImplemented for those operations, as
// before, and is sent nothing more.

// extClient sends requests to the extension endpoints, signed as the
// connection string says: SharedKeyLite with the account key, a shared
// access signature, or a bearer token.
type extClient struct {
	root    *url.URL // the service root, path ending in '/'
	account string
	key     []byte     // nil: no shared key
	sas     url.Values // nil: no signature
	// signSAS, when set, signs the account SAS the requests carry (a
	// SharedKeyCredential keeps its key but signs signatures); the
	// signature in use, signed, and when it runs out are under sasMu.
	signSAS  func(start, expiry time.Time) (url.Values, error)
	sasMu    sync.Mutex
	signed   url.Values
	sasUntil time.Time
	token    azcore.TokenCredential
	do       func(*http.Request) (*http.Response, error)
	// retry is Options.Client.Retry with azcore's defaults filled in.
	retry policy.RetryOptions

	mu      sync.Mutex
	checked bool // the capability document was read
	ok      bool // and names tablestore's server
	reason  string
	// features are the capability document's features.
	features []string
}

// extCapabilities is the part of the capability document the driver
// reads.
type extCapabilities struct {
	Server     string   `json:"server"`
	APIVersion int      `json:"apiVersion"`
	Features   []string `json:"features"`
}

// extAPIVersion is the version of the extension endpoints this driver
// speaks.
const extAPIVersion = 1

// newExtClient makes the client for the service root endpoint (with a
// SAS in its query when sas is ""), or nil when the endpoint cannot be
// parsed.
func newExtClient(endpoint, account string, key []byte, sas string, token azcore.TokenCredential, opts *Options) *extClient {
	u, err := url.Parse(endpoint)
	if err != nil || u.Host == "" {
		return nil
	}
	if sas == "" {
		sas = u.RawQuery
	}
	u.RawQuery, u.Fragment = "", ""
	if !strings.HasSuffix(u.Path, "/") {
		u.Path += "/"
	}
	c := &extClient{root: u, account: account, key: key, token: token}
	if opts != nil {
		c.retry = opts.Client.Retry
	}
	c.retry = retryDefaults(c.retry)
	if sas = strings.TrimPrefix(sas, "?"); sas != "" {
		if v, err := url.ParseQuery(sas); err == nil {
			c.sas = v
		}
	}
	var tr policy.Transporter
	if opts != nil {
		tr = opts.Client.Transport
	}
	if tr != nil {
		c.do = tr.Do
	} else {
		c.do = extHTTPClient.Do
	}
	return c
}

// extHTTPClient sends the extension requests when Options.Client sets no
// transport. Long-polls last up to their wait: no client timeout, the
// context bounds each request.
var extHTTPClient = &http.Client{}

// connectionFields splits a connection string into its fields, keys
// lowercased.
func connectionFields(cs string) map[string]string {
	out := map[string]string{}
	for _, part := range strings.Split(cs, ";") {
		k, v, ok := strings.Cut(strings.TrimSpace(part), "=")
		if ok {
			out[strings.ToLower(strings.TrimSpace(k))] = strings.TrimSpace(v)
		}
	}
	return out
}

// extFromConnectionString makes the extension client of a connection
// string (nil when it names no table endpoint).
func extFromConnectionString(cs string, opts *Options) *extClient {
	f := connectionFields(cs)
	account := f["accountname"]
	endpoint := f["tableendpoint"]
	if endpoint == "" && account != "" {
		proto := f["defaultendpointsprotocol"]
		if proto == "" {
			proto = "https"
		}
		suffix := f["endpointsuffix"]
		if suffix == "" {
			suffix = "core.windows.net"
		}
		endpoint = proto + "://" + account + ".table." + suffix
	}
	if endpoint == "" {
		return nil
	}
	var key []byte
	if k := f["accountkey"]; k != "" {
		// AccountKey is base64 and may end in '=', which the split on
		// the first '=' kept.
		key, _ = base64.StdEncoding.DecodeString(k)
	}
	return newExtClient(endpoint, account, key, f["sharedaccesssignature"], nil, opts)
}

// errNoExtensions answers the extension operations on a service that is
// not tablestore's server.
func errNoExtensions(reason string) error {
	return &driver.Error{Code: edm.CodeNotImplemented,
		Message: "the service is not tablestore's server (" + reason + "): Azure Table Storage has no such operation"}
}

// require reports nil when the service is tablestore's server, reading
// the capability document the first time; NotImplemented when it is
// another; a transport error or an undecided answer (probeUndecided),
// not remembered, when it cannot tell.
func (c *extClient) require(ctx context.Context) error {
	if c == nil {
		return errNoExtensions("the connection gives no endpoint the driver can address")
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.checked {
		ok, reason, features, err := c.probe(ctx)
		if err != nil {
			return err
		}
		c.checked, c.ok, c.reason, c.features = true, ok, reason, features
	}
	if !c.ok {
		return errNoExtensions(c.reason)
	}
	return nil
}

// requireFeature is require for one feature of the capability
// document: NotImplemented when the server does not list it (an older
// server).
func (c *extClient) requireFeature(ctx context.Context, feature string) error {
	if err := c.require(ctx); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !slices.Contains(c.features, feature) {
		return &driver.Error{Code: edm.CodeNotImplemented, Message: "tablestore's server does not offer " + feature + " over the wire"}
	}
	return nil
}

// probeUndecided reports whether a capability document answered with
// status says nothing of the server: a server error, a throttle or a
// timeout (what remains after the retries), or a refused credential,
// which tablestore's server answers too. The probe's caller gets the
// error, and the next extension request asks again; any other status
// is the service's lasting answer (Azure answers 400 InvalidUri).
func probeUndecided(status int) bool {
	switch status {
	case http.StatusUnauthorized, http.StatusForbidden, http.StatusRequestTimeout, http.StatusTooManyRequests:
		return true
	}
	return status >= 500
}

// probe reads the capability document.
func (c *extClient) probe(ctx context.Context) (ok bool, reason string, features []string, err error) {
	resp, body, err := c.exchange(ctx, http.MethodGet, "", nil, nil, 1<<20)
	if err != nil {
		return false, "", nil, err
	}
	if probeUndecided(resp.StatusCode) {
		return false, "", nil, extResponseError(resp, body)
	}
	if resp.StatusCode != http.StatusOK {
		return false, fmt.Sprintf("it answers %d to the capability document", resp.StatusCode), nil, nil
	}
	var caps extCapabilities
	if json.Unmarshal(body, &caps) != nil || caps.Server != "tablestore" {
		return false, "its capability document does not name tablestore", nil, nil
	}
	if caps.APIVersion != extAPIVersion {
		return false, fmt.Sprintf("its extension endpoints are version %d, the driver speaks %d", caps.APIVersion, extAPIVersion), nil, nil
	}
	return true, "", caps.Features, nil
}

// send sends one request to {root}$tablestore/{path}, signed, once;
// body nil sends none.
func (c *extClient) send(ctx context.Context, method, path string, query url.Values, body []byte) (*http.Response, error) {
	u := *c.root
	u.Path += "$tablestore"
	if path != "" {
		u.Path += "/" + path
	}
	q := url.Values{}
	for k, v := range query {
		q[k] = v
	}
	sas, err := c.signature()
	if err != nil {
		return nil, err
	}
	for k, v := range sas {
		q[k] = v
	}
	u.RawQuery = q.Encode()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, u.String(), rd)
	if err != nil {
		return nil, fmt.Errorf("tablestore: azure: %w", err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("x-ms-version", "2019-02-02")
	date := time.Now().UTC().Format(http.TimeFormat)
	req.Header.Set("x-ms-date", date)
	switch {
	case c.token != nil:
		tk, err := c.token.GetToken(ctx, policy.TokenRequestOptions{Scopes: []string{"https://storage.azure.com/.default"}})
		if err != nil {
			return nil, fmt.Errorf("tablestore: azure: token: %w", err)
		}
		req.Header.Set("Authorization", "Bearer "+tk.Token)
	case c.key != nil && sas == nil:
		res := "/" + c.account + req.URL.EscapedPath()
		m := hmac.New(sha256.New, c.key)
		m.Write([]byte(date + "\n" + res))
		req.Header.Set("Authorization", "SharedKeyLite "+c.account+":"+base64.StdEncoding.EncodeToString(m.Sum(nil)))
	}
	resp, err := c.do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("tablestore: azure: %w", err)
	}
	return resp, nil
}

// The account SAS signed for a SharedKeyCredential lasts sasLifetime
// from sasBackdate before it is signed (for clocks behind this one), and
// is signed again when less than sasMargin of it is left.
const (
	sasLifetime = time.Hour
	sasBackdate = 15 * time.Minute
	sasMargin   = 10 * time.Minute
)

// signature is the SAS the requests carry: the connection's, or one
// signed now (see signSAS); nil when they carry none.
func (c *extClient) signature() (url.Values, error) {
	if c.signSAS == nil {
		return c.sas, nil
	}
	c.sasMu.Lock()
	defer c.sasMu.Unlock()
	now := time.Now()
	if c.signed == nil || now.Add(sasMargin).After(c.sasUntil) {
		until := now.Add(sasLifetime)
		v, err := c.signSAS(now.Add(-sasBackdate), until)
		if err != nil {
			return nil, fmt.Errorf("tablestore: azure: sign an account SAS: %w", err)
		}
		c.signed, c.sasUntil = v, until
	}
	return c.signed, nil
}

// call sends a request that needs the extensions and decodes a 2xx JSON
// answer into out (nil: ignore the body); any other status is the
// driver's error, with the code the server sent.
func (c *extClient) call(ctx context.Context, method, path string, query url.Values, in, out any) error {
	if err := c.require(ctx); err != nil {
		return err
	}
	var body []byte
	if in != nil {
		var err error
		if body, err = json.Marshal(in); err != nil {
			return err
		}
	}
	resp, b, err := c.exchange(ctx, method, path, query, body, 0)
	if err != nil {
		return err
	}
	if resp.StatusCode >= 300 {
		return extResponseError(resp, b)
	}
	if out == nil || resp.StatusCode == http.StatusNoContent {
		return nil
	}
	if err := json.Unmarshal(b, out); err != nil {
		return fmt.Errorf("%w: azure: %s %s answered: %v", driver.ErrCorrupt, method, path, err)
	}
	return nil
}

// extResponseError is the driver's error for a refused extension
// request: the server's code and message; a feed read's expired or
// stale cursor also matches driver.ErrCursorExpired or ErrCursorStale.
func extResponseError(resp *http.Response, body []byte) error {
	code, msg := odataError(body)
	if h := resp.Header.Get("x-ms-error-code"); h != "" {
		code = h
	}
	msg, _, _ = strings.Cut(msg, "\n")
	lc := libraryCode(code, resp.StatusCode, opEntity)
	e := &driver.Error{Code: lc, Message: describe(msg, resp.StatusCode)}
	switch {
	case lc == edm.CodeOutOfRangeInput && strings.HasPrefix(msg, "change cursor expired"):
		return &cursorError{sentinel: driver.ErrCursorExpired, err: e}
	case lc == edm.CodeInvalidInput && strings.HasPrefix(msg, "change cursor does not belong"):
		return &cursorError{sentinel: driver.ErrCursorStale, err: e}
	}
	return e
}

// cursorError is a feed read's refusal that matches a cursor sentinel
// and carries the server's code.
type cursorError struct {
	sentinel error
	err      *driver.Error
}

func (e *cursorError) Error() string { return e.err.Error() }

func (e *cursorError) Unwrap() []error { return []error{e.sentinel, e.err} }

// tablePath is the extension path of one of a table's resources.
func tablePath(table, what string) string {
	return "tables/" + url.PathEscape(table) + "/" + what
}
