package azure

import (
	"net/http"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
)

// TestRetryDelay checks the wait between tries: the server's
// Retry-After in seconds, as an HTTP date or in milliseconds, else the
// exponential backoff with jitter; each capped by MaxRetryDelay.
func TestRetryDelay(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	answer := func(h map[string]string) *http.Response {
		r := &http.Response{StatusCode: http.StatusServiceUnavailable, Header: http.Header{}}
		for k, v := range h {
			r.Header.Set(k, v)
		}
		return r
	}
	for _, c := range []struct {
		name string
		h    map[string]string
		want time.Duration
	}{
		{"seconds", map[string]string{"Retry-After": "7"}, 7 * time.Second},
		{"date", map[string]string{"Retry-After": now.Add(90 * time.Second).Format(http.TimeFormat)}, 90 * time.Second},
		{"date past", map[string]string{"Retry-After": now.Add(-time.Minute).Format(http.TimeFormat)}, 0},
		{"zero", map[string]string{"Retry-After": "0"}, 0},
		{"garbage", map[string]string{"Retry-After": "soon"}, 0},
		{"milliseconds first", map[string]string{"retry-after-ms": "250", "Retry-After": "7"}, 250 * time.Millisecond},
		{"x-ms milliseconds", map[string]string{"x-ms-retry-after-ms": "40"}, 40 * time.Millisecond},
		{"none", nil, 0},
	} {
		if got := retryAfter(answer(c.h), now); got != c.want {
			t.Errorf("%s: retryAfter %v, want %v", c.name, got, c.want)
		}
	}
	if got := retryAfter(nil, now); got != 0 {
		t.Errorf("no response: %v", got)
	}

	o := retryDefaults(policy.RetryOptions{})
	if o.MaxRetries != 3 || o.RetryDelay != 800*time.Millisecond || o.MaxRetryDelay != time.Minute || len(o.StatusCodes) != 6 {
		t.Fatalf("defaults: %+v", o)
	}
	if got := retryDelay(o, answer(map[string]string{"Retry-After": "7"}), 1); got != 7*time.Second {
		t.Errorf("Retry-After 7: waits %v", got)
	}
	if got := retryDelay(o, answer(map[string]string{"Retry-After": "3600"}), 1); got != time.Minute {
		t.Errorf("Retry-After of an hour: waits %v, want the cap", got)
	}
	// Backoff: (2^try - 1) * 800 ms * [0.8, 1.3), capped at a minute.
	for try, bounds := range map[int][2]time.Duration{
		1:  {640 * time.Millisecond, 1040 * time.Millisecond},
		2:  {1920 * time.Millisecond, 3120 * time.Millisecond},
		3:  {4480 * time.Millisecond, 7280 * time.Millisecond},
		7:  {time.Minute, time.Minute},
		80: {time.Minute, time.Minute},
	} {
		for range 20 {
			if got := retryDelay(o, answer(nil), try); got < bounds[0] || got > bounds[1] {
				t.Fatalf("try %d: waits %v, want %v to %v", try, got, bounds[0], bounds[1])
			}
		}
	}
	none := retryDefaults(policy.RetryOptions{MaxRetries: -1, RetryDelay: -1, MaxRetryDelay: -1, StatusCodes: []int{}})
	if none.MaxRetries != 0 || none.RetryDelay != 0 || none.MaxRetryDelay <= time.Hour || none.StatusCodes == nil || len(none.StatusCodes) != 0 {
		t.Fatalf("negative options: %+v", none)
	}
	if got := retryDelay(none, answer(nil), 3); got != 0 {
		t.Errorf("no delay asked: waits %v", got)
	}
}

// TestExtIdempotent pins which extension requests are sent again.
func TestExtIdempotent(t *testing.T) {
	for _, c := range []struct {
		method, path string
		want         bool
	}{
		{"GET", "", true},
		{"GET", "tables/T/changes", true},
		{"GET", "tables/T/query", true},
		{"PUT", "tables/T/changefeed", true},
		{"DELETE", "tables/T/changefeed", true},
		{"PUT", "tables/T/ttl", true},
		{"DELETE", "tables/T/partition", true},
		{"PUT", "tables/T/indexes/I", false},
		{"DELETE", "tables/T/indexes/I", false},
		{"POST", "tables/T/changefeed", false},
		{"PUT", "tables/T/unknown", false},
		{"PUT", "other", false},
	} {
		if got := extIdempotent(c.method, c.path); got != c.want {
			t.Errorf("%s %s: idempotent %v, want %v", c.method, c.path, got, c.want)
		}
	}
}
