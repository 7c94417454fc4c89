package console

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/tablestore/tablestore"
	"github.com/tablestore/tablestore/driver"
	"github.com/tablestore/tablestore/edm"
)

// expiredTimeout bounds the count of expired entities on a table's page:
// the count reads one index entry per expired entity, so a large backlog
// is reported as "at least" what was counted in time.
const expiredTimeout = 300 * time.Millisecond

// ttlView is a table's time-to-live settings as the pages show them.
type ttlView struct {
	On       bool
	Default  string // formatDuration of TTL.Default; "" for never
	Property string
	// Expired counts entities expired and awaiting the sweeper (table
	// page only); ExpiredNote explains a missing or partial count.
	Expired     int64
	ExpiredNote string
	Counted     bool
}

// feedView is a table's change feed as the pages show it.
type feedView struct {
	On        bool
	Retention string
	Images    string // an ImageMode's name: "keysOnly" or "new"
	Oldest    string // cursors
	Latest    string
}

// readTTL fills f's time-to-live settings; with expired, it also counts
// the expired entities awaiting the sweeper, for at most expiredTimeout.
func readTTL(ctx context.Context, t *tablestore.Table, f *tableFeatures, expired bool) {
	s, err := t.TTL(ctx)
	switch {
	case errors.Is(err, tablestore.ErrNotImplemented):
		return
	case err != nil:
		f.TTLAvailable, f.TTLError = true, errorText(err)
		return
	}
	f.TTLAvailable = true
	v := &ttlView{On: s.Default > 0 || s.Property != "", Property: s.Property}
	if s.Default > 0 {
		v.Default = formatDuration(s.Default)
	}
	if expired && v.On {
		cctx, cancel := context.WithTimeout(ctx, expiredTimeout)
		n, err := t.ExpiredCount(cctx)
		cancel()
		switch {
		case err == nil:
			v.Expired, v.Counted = n, true
		case errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil:
			v.ExpiredNote = "too many to count quickly"
		default:
			v.ExpiredNote = errorText(err)
		}
	}
	f.TTL = v
}

// readFeed fills f's change feed status.
func readFeed(ctx context.Context, t *tablestore.Table, f *tableFeatures) {
	st, err := t.ChangeFeed(ctx)
	switch {
	case errors.Is(err, tablestore.ErrNotImplemented):
		return
	case err != nil:
		f.FeedAvailable, f.FeedError = true, errorText(err)
		return
	}
	f.FeedAvailable = true
	f.Feed = newFeedView(st)
}

func newFeedView(st *tablestore.ChangeFeedStatus) *feedView {
	v := &feedView{On: st.Enabled, Images: st.Options.Images.String(), Retention: formatDuration(tablestore.DefaultChangeRetention)}
	if st.Enabled {
		v.Retention = formatDuration(st.Options.Retention)
		v.Oldest, v.Latest = st.Oldest.String(), st.Latest.String()
	}
	return v
}

// formatDuration writes d in the largest whole unit of d (from two days
// on), h, m or s: "7d", "24h", "90m", "45s"; other durations as Go writes
// them.
func formatDuration(d time.Duration) string {
	day := 24 * time.Hour
	for _, u := range []struct {
		unit time.Duration
		name string
	}{{day, "d"}, {time.Hour, "h"}, {time.Minute, "m"}, {time.Second, "s"}} {
		if d >= u.unit && d%u.unit == 0 && (u.name != "d" || d >= 2*day) {
			return strconv.FormatInt(int64(d/u.unit), 10) + u.name
		}
	}
	return d.String()
}

// parseDuration reads a duration as the settings forms take it: a number
// of days ("7d", "1.5d") or a Go duration ("36h", "90m", "1h30m"); "" or
// "0" is zero. Errors: InvalidInput.
func parseDuration(what, s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if s == "" || s == "0" {
		return 0, nil
	}
	bad := &tablestore.Error{Code: edm.CodeInvalidInput,
		Message: fmt.Sprintf("%s %q is not a duration: write a number of days (7d) or hours, minutes, seconds (36h, 90m, 1h30m)", what, s)}
	if n, ok := strings.CutSuffix(s, "d"); ok {
		f, err := strconv.ParseFloat(n, 64)
		if err != nil || f < 0 || f > 100000 { // beyond, the library refuses it anyway
			return 0, bad
		}
		return time.Duration(f * float64(24*time.Hour)).Round(time.Second), nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, bad
	}
	return d, nil
}

// settingsNotices are the notices the settings actions redirect with.
var settingsNotices = map[string]string{
	"ttl":      "Time to live saved.",
	"ttl-off":  "Time to live turned off: entities no longer expire.",
	"feed-on":  "Change feed on: every change from now on is recorded.",
	"feed-set": "Change feed settings saved.",
	"feed-off": "Change feed off: its records are deleted.",
}

// setTTL sets or clears a table's time to live. Setting one must be
// confirmed (confirm=1): entities already past the new expiry disappear
// at once.
func (c *Console) setTTL(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("table")
	form := ttlForm{Default: r.PostFormValue("default"), Property: strings.TrimSpace(r.PostFormValue("property"))}
	off := r.PostFormValue("off") == "1"
	fail := func(status int, msg string, code tablestore.Code) {
		c.renderTableWith(w, r, status, func(b *tableBody) { b.TTLError, b.TTLCode, b.NewTTL = msg, code, &form })
	}
	var s tablestore.TTL
	if !off {
		d, err := parseDuration("the default time to live", form.Default)
		if err != nil {
			fail(statusOf(err), errorText(err), tablestore.ErrorCode(err))
			return
		}
		s = tablestore.TTL{Default: d, Property: form.Property}
		if s == (tablestore.TTL{}) {
			fail(http.StatusBadRequest, "give a default time to live, an expiry property or both (or turn expiry off)", edm.CodeInvalidInput)
			return
		}
		if r.PostFormValue("confirm") != "1" {
			fail(http.StatusBadRequest, "confirm first: entities already past their new expiry disappear at once", "")
			return
		}
	}
	if err := c.store(r).Table(name).SetTTL(r.Context(), s); err != nil {
		fail(statusOf(err), errorText(err), tablestore.ErrorCode(err))
		return
	}
	notice := "ttl"
	if off {
		notice = "ttl-off"
	}
	c.logChange(r, "set time to live", "table", name, "default", s.Default.String(), "property", s.Property)
	http.Redirect(w, r, c.o.Prefix+"/tables/"+url.PathEscape(name)+"?notice="+notice+"#ttl", http.StatusSeeOther)
}

// ttlForm keeps the time-to-live form's fields after an error.
type ttlForm struct{ Default, Property string }

// feedForm keeps the change feed form's fields after an error.
type feedForm struct{ Retention, Images string }

// setChangeFeed turns a table's change feed on, or changes its settings,
// once confirmed (confirm=1). The form's back field says which page to
// return to: "changes" for the Changes page, else the table's page.
func (c *Console) setChangeFeed(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("table")
	form := feedForm{Retention: r.PostFormValue("retention"), Images: r.PostFormValue("images")}
	back := r.PostFormValue("back")
	fail := func(status int, msg string, code tablestore.Code) {
		if back == "changes" {
			c.renderChanges(w, r, status, func(b *changesBody) { b.FeedError, b.FeedCode, b.NewFeed = msg, code, &form })
			return
		}
		c.renderTableWith(w, r, status, func(b *tableBody) { b.FeedError, b.FeedCode, b.NewFeed = msg, code, &form })
	}
	ret, err := parseDuration("the retention", form.Retention)
	if err == nil && ret == 0 {
		err = &tablestore.Error{Code: edm.CodeInvalidInput, Message: "the retention must be longer than zero"}
	}
	if err != nil {
		fail(statusOf(err), errorText(err), tablestore.ErrorCode(err))
		return
	}
	images := tablestore.ImagesKeysOnly
	if form.Images != "" {
		var ok bool
		if images, ok = driver.ParseImageMode(form.Images); !ok {
			fail(http.StatusBadRequest, fmt.Sprintf("unknown image mode %q: keysOnly or new", form.Images), edm.CodeInvalidInput)
			return
		}
	}
	if r.PostFormValue("confirm") != "1" {
		fail(http.StatusBadRequest, "confirm first: the feed records every change of the table from now on, and costs a write per change", "")
		return
	}
	t := c.store(r).Table(name)
	notice := "feed-on"
	if st, err := t.ChangeFeed(r.Context()); err == nil && st.Enabled {
		notice = "feed-set"
	}
	if err := t.EnableChangeFeed(r.Context(), tablestore.ChangeFeedOptions{Retention: ret, Images: images}); err != nil {
		fail(statusOf(err), errorText(err), tablestore.ErrorCode(err))
		return
	}
	c.logChange(r, "enable change feed", "table", name, "retention", ret.String(), "images", form.Images)
	c.redirectAfterFeed(w, r, name, back, notice)
}

// disableChangeFeed turns a table's change feed off, deleting its
// records, once the form repeats the table's name.
func (c *Console) disableChangeFeed(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("table")
	back := r.PostFormValue("back")
	fail := func(status int, msg string, code tablestore.Code) {
		if back == "changes" {
			c.renderChanges(w, r, status, func(b *changesBody) { b.FeedError, b.FeedCode = msg, code })
			return
		}
		c.renderTableWith(w, r, status, func(b *tableBody) { b.FeedError, b.FeedCode = msg, code })
	}
	if r.PostFormValue("confirm") != name {
		fail(http.StatusBadRequest, "type the table's name exactly to turn its change feed off", "")
		return
	}
	if err := c.store(r).Table(name).DisableChangeFeed(r.Context()); err != nil {
		fail(statusOf(err), errorText(err), tablestore.ErrorCode(err))
		return
	}
	c.logChange(r, "disable change feed", "table", name)
	c.redirectAfterFeed(w, r, name, back, "feed-off")
}

func (c *Console) redirectAfterFeed(w http.ResponseWriter, r *http.Request, name, back, notice string) {
	u := c.o.Prefix + "/tables/" + url.PathEscape(name)
	if back == "changes" {
		u += "/changes?notice=" + notice
	} else {
		u += "?notice=" + notice + "#changefeed"
	}
	http.Redirect(w, r, u, http.StatusSeeOther)
}
