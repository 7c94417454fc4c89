package azure

import (
	"context"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
)

// Extension requests retry as the SDK's own requests do under
// Options.Client.Retry (azcore's retry policy): transport errors and the
// retry status codes (408, 429, 500, 502, 503, 504 by default) are tried
// again after an exponential backoff with jitter, or after the server's
// Retry-After, capped by MaxRetryDelay. Unlike the SDK's, they retry only
// requests that are safe to send twice (extIdempotent), never a 4xx
// other than 408 and 429, and a Retry-After beyond MaxRetryDelay is
// waited for as MaxRetryDelay rather than ending the retries.
//
// Long-polls (wait=) are plain GETs and retry as any read: a retry
// follows a failure only, after its backoff, and a long-poll that ends
// empty is an answer, not a failure, so retries never turn one into a
// busy loop; TryTimeout bounds each try beyond the wait it asks for, so
// a per-try timeout shorter than the wait does not cut every poll short.
// The driver does not use the server-sent events form of the feed.

// retryDefaults fills in azcore's defaults: MaxRetries 0 is 3 and a
// negative one none; RetryDelay 0 is 800 ms and a negative one no delay;
// MaxRetryDelay 0 is 60 s and a negative one no cap; StatusCodes nil is
// 408, 429, 500, 502, 503 and 504 (an empty slice retries no status).
func retryDefaults(o policy.RetryOptions) policy.RetryOptions {
	switch {
	case o.MaxRetries == 0:
		o.MaxRetries = 3
	case o.MaxRetries < 0:
		o.MaxRetries = 0
	}
	switch {
	case o.RetryDelay == 0:
		o.RetryDelay = 800 * time.Millisecond
	case o.RetryDelay < 0:
		o.RetryDelay = 0
	}
	switch {
	case o.MaxRetryDelay == 0:
		o.MaxRetryDelay = 60 * time.Second
	case o.MaxRetryDelay < 0:
		o.MaxRetryDelay = math.MaxInt64
	}
	if o.StatusCodes == nil {
		o.StatusCodes = []int{http.StatusRequestTimeout, http.StatusTooManyRequests, http.StatusInternalServerError,
			http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout}
	}
	return o
}

// extIdempotent reports whether an extension request may be sent again
// when its answer was lost or the server refused it for the moment:
// whether a second try, after a first one that took effect, leaves the
// same state and answers as the first would have.
func extIdempotent(method, path string) bool {
	if method == http.MethodGet || method == http.MethodHead {
		return true // reads change nothing, long-polls included
	}
	// path is "tables/{t}/{resource}[/{name}]", each part escaped.
	parts := strings.Split(path, "/")
	if len(parts) < 3 || parts[0] != "tables" {
		return false
	}
	switch parts[2] {
	case "changefeed":
		// Enabling a feed that is on sets the same settings and keeps
		// its records; disabling a feed that is off is not an error.
		return method == http.MethodPut || method == http.MethodDelete
	case "ttl":
		// Setting the same TTL again leaves the same settings.
		return method == http.MethodPut
	case "partition":
		// The range is empty after either try, and the answer carries
		// no count; the retry takes effect as the delete's last moment.
		return method == http.MethodDelete
	}
	// Index creates and drops are not retried: a second create of an
	// index the first one made is refused as a name taken (and a build
	// the first try began is removed when its client goes away), and a
	// second drop of an index the first one dropped answers
	// ResourceNotFound.
	return false
}

// exchange sends an extension request and reads its answer whole (at
// most limit bytes when limit > 0), retrying as c.retry says when the
// request is idempotent. The response's body is consumed and closed;
// the last try's status and headers are returned with the body read.
func (c *extClient) exchange(ctx context.Context, method, path string, query url.Values, body []byte, limit int64) (*http.Response, []byte, error) {
	o := c.retry
	idempotent := extIdempotent(method, path)
	var wait time.Duration
	if s, err := strconv.ParseFloat(query.Get("wait"), 64); err == nil && s > 0 {
		wait = time.Duration(s * float64(time.Second))
	}
	for try := 1; ; try++ {
		resp, b, err := c.tryOnce(ctx, method, path, query, body, limit, o.TryTimeout, wait)
		if ctx.Err() != nil {
			return nil, nil, ctx.Err()
		}
		if !idempotent || try > int(o.MaxRetries) || !c.shouldRetry(resp, err) {
			return resp, b, err
		}
		delay := retryDelay(o, resp, try)
		t := time.NewTimer(delay)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return nil, nil, ctx.Err()
		}
	}
}

// tryOnce sends the request once and reads its answer, within
// tryTimeout (when positive) plus the long-poll's wait.
func (c *extClient) tryOnce(ctx context.Context, method, path string, query url.Values, body []byte, limit int64, tryTimeout, wait time.Duration) (*http.Response, []byte, error) {
	if tryTimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, tryTimeout+wait)
		defer cancel()
	}
	resp, err := c.send(ctx, method, path, query, body)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	var rd io.Reader = resp.Body
	if limit > 0 {
		rd = io.LimitReader(rd, limit)
	}
	b, err := io.ReadAll(rd)
	if err != nil {
		if ctx.Err() != nil {
			return nil, nil, ctx.Err()
		}
		return nil, nil, fmt.Errorf("tablestore: azure: reading the answer: %w", err)
	}
	return resp, b, nil
}

// shouldRetry reports whether a try's outcome calls for another:
// a transport error, or a status of the retry codes, never a 4xx other
// than 408 and 429. RetryOptions.ShouldRetry, when set, decides in place
// of the codes, within the same bounds.
func (c *extClient) shouldRetry(resp *http.Response, err error) bool {
	if resp != nil && resp.StatusCode >= 400 && resp.StatusCode < 500 &&
		resp.StatusCode != http.StatusRequestTimeout && resp.StatusCode != http.StatusTooManyRequests {
		return false
	}
	if c.retry.ShouldRetry != nil {
		return c.retry.ShouldRetry(resp, err)
	}
	if err != nil {
		return true
	}
	return slices.Contains(c.retry.StatusCodes, resp.StatusCode)
}

// retryDelay is the wait before try+1: the server's Retry-After when it
// sent one, else RetryDelay * (2^try - 1) with a jitter of 0.8 to 1.3;
// either capped by MaxRetryDelay.
func retryDelay(o policy.RetryOptions, resp *http.Response, try int) time.Duration {
	delay := retryAfter(resp, time.Now())
	if delay <= 0 {
		factor := time.Duration(math.MaxInt64)
		if try < 62 {
			factor = time.Duration(int64(1)<<try - 1)
		}
		d := float64(o.RetryDelay) * float64(factor) * (0.8 + rand.Float64()/2)
		if d >= float64(math.MaxInt64) {
			delay = math.MaxInt64
		} else {
			delay = time.Duration(d)
		}
	}
	return min(delay, o.MaxRetryDelay)
}

// retryAfter is how long the server asks the client to wait, from
// retry-after-ms, x-ms-retry-after-ms or Retry-After (seconds or an HTTP
// date); 0 when it asks nothing.
func retryAfter(resp *http.Response, now time.Time) time.Duration {
	if resp == nil {
		return 0
	}
	for _, h := range []string{"retry-after-ms", "x-ms-retry-after-ms"} {
		if ms, err := strconv.ParseInt(strings.TrimSpace(resp.Header.Get(h)), 10, 64); err == nil && ms > 0 {
			return time.Duration(min(ms, math.MaxInt64/int64(time.Millisecond))) * time.Millisecond
		}
	}
	v := strings.TrimSpace(resp.Header.Get("Retry-After"))
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseInt(v, 10, 64); err == nil {
		if s <= 0 {
			return 0
		}
		return time.Duration(min(s, math.MaxInt64/int64(time.Second))) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(t.Sub(now), 0)
	}
	return 0
}
