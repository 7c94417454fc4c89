package console

import (
	"context"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/require"
	"github.com/tablestore/tablestore"
	"github.com/tablestore/tablestore/edm"
)

func TestTTLSettings(t *testing.T) {
	ctx := context.Background()
	var mu sync.Mutex
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	db, err := tablestore.OpenInMemory(&tablestore.Options{Clock: clock, SweepRate: 1})
	require.NoError(t, err)
	defer db.Close()
	h := newHarnessDB(t, db, nil)
	tb := h.table("Sessions")
	for i := range 40 {
		require.NoError(t, tb.Insert(ctx, &tablestore.Entity{PartitionKey: "p", RowKey: strings.Repeat("r", i+1)}))
	}
	h.login()

	// Setting a TTL must be confirmed; the form keeps what was typed.
	status, body, _ := h.post("/tables/Sessions/ttl", url.Values{"default": {"36h"}, "property": {"ExpiresAt"}})
	require.Equal(t, http.StatusBadRequest, status)
	require.Contains(t, body, `id="ttl-error"`)
	require.Contains(t, body, "confirm first")
	require.Contains(t, body, `value="36h"`)
	require.Contains(t, body, `value="ExpiresAt"`)
	s, err := tb.TTL(ctx)
	require.NoError(t, err)
	require.Equal(t, tablestore.TTL{}, s, "nothing set")

	// Bad values are the library's errors, or the form's.
	for _, c := range []struct {
		form url.Values
		code tablestore.Code
		msg  string
	}{
		{url.Values{"default": {"soon"}}, edm.CodeInvalidInput, "is not a duration"},
		{url.Values{"default": {"-5h"}}, edm.CodeInvalidInput, "is not a duration"},
		{url.Values{"default": {"200000d"}}, edm.CodeInvalidInput, "is not a duration"},
		{url.Values{"default": {"40000d"}}, edm.CodeInvalidInput, "not within"},
		{url.Values{"property": {"Timestamp"}}, edm.CodeInvalidInput, "system property"},
		{url.Values{"property": {"bad name"}}, edm.CodePropertyNameInvalid, ""},
		{url.Values{"default": {""}}, edm.CodeInvalidInput, "give a default"},
	} {
		c.form.Set("confirm", "1")
		status, body, _ = h.post("/tables/Sessions/ttl", c.form)
		require.Equal(t, http.StatusBadRequest, status, c.form)
		require.Contains(t, body, `<code class="code">`+string(c.code)+`</code>`, c.form)
		require.Contains(t, body, c.msg, c.form)
	}

	// Set, confirmed: the page shows it, and the count of expired
	// entities awaiting the sweeper, as an estimate.
	status, _, loc := h.post("/tables/Sessions/ttl", url.Values{"default": {"1h"}, "confirm": {"1"}})
	require.Equal(t, http.StatusSeeOther, status)
	require.Equal(t, "/tables/Sessions?notice=ttl#ttl", loc)
	s, err = tb.TTL(ctx)
	require.NoError(t, err)
	require.Equal(t, tablestore.TTL{Default: time.Hour}, s)
	status, body, _ = h.get(loc)
	require.Equal(t, http.StatusOK, status)
	require.Contains(t, body, `<p class="notice" id="settings-notice">Time to live saved.</p>`)
	require.Contains(t, body, "<strong>1h</strong> after their last write")
	require.Contains(t, body, `≈ 0 expired, awaiting the sweeper <span class="est">estimate</span>`)
	require.Contains(t, body, `id="ttl-default" size="16" class="mono" placeholder="7d, 36h, 90m" value="1h"`)
	requireFieldFits(t, body, "ttl-default")

	mu.Lock()
	now = now.Add(2 * time.Hour)
	mu.Unlock()
	status, body, _ = h.get("/tables/Sessions")
	require.Equal(t, http.StatusOK, status)
	n := expiredShown(t, body)
	require.Greater(t, n, 30, "the sweeper removes one a second")
	require.LessOrEqual(t, n, 40)
	status, body, _ = h.get("/tables")
	require.Equal(t, http.StatusOK, status)
	require.Contains(t, body, "no indexes · TTL 1h</a>")

	// A property, and days.
	status, _, _ = h.post("/tables/Sessions/ttl", url.Values{"default": {"7d"}, "property": {"ExpiresAt"}, "confirm": {"1"}})
	require.Equal(t, http.StatusSeeOther, status)
	s, err = tb.TTL(ctx)
	require.NoError(t, err)
	require.Equal(t, tablestore.TTL{Default: 7 * 24 * time.Hour, Property: "ExpiresAt"}, s)
	_, body, _ = h.get("/tables/Sessions")
	require.Contains(t, body, "at their <code>ExpiresAt</code> (Edm.DateTime), else <strong>7d</strong> after their last write")

	// Off needs no confirmation.
	status, _, loc = h.post("/tables/Sessions/ttl", url.Values{"off": {"1"}})
	require.Equal(t, http.StatusSeeOther, status)
	require.Equal(t, "/tables/Sessions?notice=ttl-off#ttl", loc)
	s, err = tb.TTL(ctx)
	require.NoError(t, err)
	require.Equal(t, tablestore.TTL{}, s)
	_, body, _ = h.get(loc)
	require.Contains(t, body, "Off: entities never expire.")

	status, _, _ = h.post("/tables/Nobody/ttl", url.Values{"default": {"1h"}, "confirm": {"1"}})
	require.Equal(t, http.StatusNotFound, status)
}

// expiredShown reads the count of expired entities a table page shows.
func expiredShown(t *testing.T, body string) int {
	t.Helper()
	_, rest, ok := strings.Cut(body, `<p id="ttl-expired">≈ `)
	require.True(t, ok, "no count of expired entities")
	num, _, _ := strings.Cut(rest, " ")
	return atoiDefault(strings.ReplaceAll(num, ",", ""), -1)
}

func TestChangeFeedSettings(t *testing.T) {
	ctx := context.Background()
	h := newHarness(t, nil)
	tb := h.table("Orders")
	h.login()

	// Turning the feed on must be confirmed.
	status, body, _ := h.post("/tables/Orders/changefeed", url.Values{"retention": {"48h"}, "images": {"new"}, "back": {"changes"}})
	require.Equal(t, http.StatusBadRequest, status)
	require.Contains(t, body, `id="feed-error"`)
	require.Contains(t, body, `id="changes-off"`, "back on the Changes page")
	require.Contains(t, body, `value="48h"`)
	require.Contains(t, body, `<option value="new" selected>`)
	st, err := tb.ChangeFeed(ctx)
	require.NoError(t, err)
	require.False(t, st.Enabled)
	for _, form := range []url.Values{
		{"retention": {"0"}},
		{"retention": {"later"}},
		{"retention": {"1h"}, "images": {"old"}},
	} {
		form.Set("confirm", "1")
		status, body, _ = h.post("/tables/Orders/changefeed", form)
		require.Equal(t, http.StatusBadRequest, status, form)
		require.Contains(t, body, `id="changefeed"`, form)
		require.Contains(t, body, `<code class="code">InvalidInput</code>`, form)
	}

	// Confirmed, from the Changes page: on, and back there.
	status, _, loc := h.post("/tables/Orders/changefeed", url.Values{"retention": {"48h"}, "images": {"new"}, "confirm": {"1"}, "back": {"changes"}})
	require.Equal(t, http.StatusSeeOther, status)
	require.Equal(t, "/tables/Orders/changes?notice=feed-on", loc)
	st, err = tb.ChangeFeed(ctx)
	require.NoError(t, err)
	require.True(t, st.Enabled)
	require.Equal(t, tablestore.ChangeFeedOptions{Retention: 48 * time.Hour, Images: tablestore.ImagesNew}, st.Options)
	status, body, _ = h.get(loc)
	require.Equal(t, http.StatusOK, status)
	require.Contains(t, body, "Change feed on: every change from now on is recorded.")
	require.Contains(t, body, `id="tail"`)
	require.Contains(t, body, "Save feed settings")

	// The table page shows it; new settings keep it on.
	status, body, _ = h.get("/tables/Orders")
	require.Equal(t, http.StatusOK, status)
	require.Contains(t, body, `<span class="ok-text">On</span>: records kept 2d, with each written entity.`)
	status, _, loc = h.post("/tables/Orders/changefeed", url.Values{"retention": {"6h"}, "images": {"keysOnly"}, "confirm": {"1"}})
	require.Equal(t, http.StatusSeeOther, status)
	require.Equal(t, "/tables/Orders?notice=feed-set#changefeed", loc)
	st, err = tb.ChangeFeed(ctx)
	require.NoError(t, err)
	require.Equal(t, tablestore.ChangeFeedOptions{Retention: 6 * time.Hour, Images: tablestore.ImagesKeysOnly}, st.Options)
	_, body, _ = h.get("/tables")
	require.Contains(t, body, "no indexes · change feed on</a>")

	// Off only with the table's name typed.
	status, body, _ = h.post("/tables/Orders/changefeed/disable", url.Values{"confirm": {"orders"}})
	require.Equal(t, http.StatusBadRequest, status)
	require.Contains(t, body, "type the table&#39;s name exactly")
	st, err = tb.ChangeFeed(ctx)
	require.NoError(t, err)
	require.True(t, st.Enabled)
	status, _, loc = h.post("/tables/Orders/changefeed/disable", url.Values{"confirm": {"Orders"}, "back": {"changes"}})
	require.Equal(t, http.StatusSeeOther, status)
	require.Equal(t, "/tables/Orders/changes?notice=feed-off", loc)
	st, err = tb.ChangeFeed(ctx)
	require.NoError(t, err)
	require.False(t, st.Enabled)
}

// TestSettingsRefuseCrossSite holds every new state-changing endpoint to
// the CSRF rules: without the session's token, or from another origin,
// nothing changes.
func TestSettingsRefuseCrossSite(t *testing.T) {
	ctx := context.Background()
	h := newHarness(t, nil)
	tb := h.table("Orders")
	h.login()
	require.NoError(t, tb.EnableChangeFeed(ctx, tablestore.ChangeFeedOptions{}))
	posts := map[string]url.Values{
		"/tables/Orders/ttl":                {"default": {"1h"}, "confirm": {"1"}},
		"/tables/Orders/changefeed":         {"retention": {"1h"}, "confirm": {"1"}},
		"/tables/Orders/changefeed/disable": {"confirm": {"Orders"}},
	}
	for path, form := range posts {
		// No token.
		status, _, _ := h.do("POST", path, strings.NewReader(form.Encode()), h.sameOrigin("application/x-www-form-urlencoded"))
		require.Equal(t, http.StatusForbidden, status, path)
		// The token, from another site.
		f := url.Values{"csrf": {h.csrf}}
		for k, v := range form {
			f[k] = v
		}
		hd := h.sameOrigin("application/x-www-form-urlencoded")
		hd.Set("Origin", "http://evil.example")
		hd.Set("Sec-Fetch-Site", "cross-site")
		status, _, _ = h.do("POST", path, strings.NewReader(f.Encode()), hd)
		require.Equal(t, http.StatusForbidden, status, path)
		// A GET changes nothing.
		status, _, _ = h.do("GET", path+"?"+f.Encode(), nil, nil)
		require.NotEqual(t, http.StatusSeeOther, status, path)
	}
	s, err := tb.TTL(ctx)
	require.NoError(t, err)
	require.Equal(t, tablestore.TTL{}, s)
	st, err := tb.ChangeFeed(ctx)
	require.NoError(t, err)
	require.True(t, st.Enabled)
	require.Equal(t, tablestore.DefaultChangeRetention, st.Options.Retention)
}

func TestDurations(t *testing.T) {
	for _, c := range []struct {
		in   string
		want time.Duration
		text string
	}{
		{"", 0, "0s"},
		{"0", 0, "0s"},
		{"7d", 7 * 24 * time.Hour, "7d"},
		{"1.5d", 36 * time.Hour, "36h"},
		{"1d", 24 * time.Hour, "24h"},
		{"90m", 90 * time.Minute, "90m"},
		{"1h30m", 90 * time.Minute, "90m"},
		{" 45s ", 45 * time.Second, "45s"},
		{"1500ms", 1500 * time.Millisecond, "1.5s"},
	} {
		d, err := parseDuration("x", c.in)
		require.NoError(t, err, c.in)
		require.Equal(t, c.want, d, c.in)
		require.Equal(t, c.text, formatDuration(d), c.in)
	}
	for _, in := range []string{"d", "-1d", "x7d", "7 days", "-1h", "1e9d"} {
		_, err := parseDuration("x", in)
		require.Equal(t, edm.CodeInvalidInput, tablestore.ErrorCode(err), in)
	}
}

// requireFieldFits checks that the input with the id is wide enough
// (size, in characters) for its whole placeholder and a margin.
func requireFieldFits(t *testing.T, body, id string) {
	t.Helper()
	m := regexp.MustCompile(`<input[^>]*id="` + id + `"[^>]*>`).FindString(body)
	require.NotEmpty(t, m, "no input #%s", id)
	size := regexp.MustCompile(` size="(\d+)"`).FindStringSubmatch(m)
	ph := regexp.MustCompile(` placeholder="([^"]*)"`).FindStringSubmatch(m)
	require.NotNil(t, size, m)
	require.NotNil(t, ph, m)
	n, err := strconv.Atoi(size[1])
	require.NoError(t, err)
	require.GreaterOrEqual(t, n, utf8.RuneCountInString(html.UnescapeString(ph[1]))+2, "#%s cuts its placeholder: %s", id, m)
}
