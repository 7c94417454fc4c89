package main

import (
	"context"
	"flag"
	"fmt"
	"github.com/tablestore/tablestore/edm"
	"math"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"
	"github.com/tablestore/tablestore"
	"github.com/tablestore/tablestore/console"
	"github.com/tablestore/tablestore/server"
)

// screenshotDir is where TestConsoleInBrowser writes its screenshots; by
// default a temporary directory. The ones in docs/console come from
//
//	go test -run TestConsoleInBrowser -screenshots ../../docs/console
var screenshotDir = flag.String("screenshots", "", "write the console's screenshots into this directory")

// requireChromiumEnv makes a missing browser a failure instead of a skip.
const requireChromiumEnv = "TABLESTORE_REQUIRE_CHROMIUM"

// renderBound is the generous bound on a page's load time (navigation
// start to the end of the load event) the browser test asserts; the goal is
// 200 ms on a local store, and the test reports each figure.
const renderBound = 2 * time.Second

// chromiumPath finds a Chromium or Chrome, or skips the test (fails it
// when $TABLESTORE_REQUIRE_CHROMIUM is set).
func chromiumPath(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv(requireChromiumEnv) != "" {
		t.Fatalf("no chromium on $PATH and $%s is set: install it (apt-get install chromium)", requireChromiumEnv)
	}
	t.Skipf("no chromium on $PATH: the console's browser test needs it (apt-get install chromium); set $%s to make this a failure", requireChromiumEnv)
	return ""
}

// browser drives one headless Chromium tab.
type browser struct {
	t    *testing.T
	ctx  context.Context
	base string // the console's root URL
	shot string // screenshot directory
	// times are the load times of the pages measured, in order.
	times []pageTime
}

type pageTime struct {
	page                 string
	ttfb, domReady, load float64 // milliseconds from navigation start
}

func (b *browser) do(steps ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 60*time.Second)
	defer cancel()
	require.NoError(b.t, chromedp.Do(ctx, steps...))
}

// text returns the text of the element sel selects. It asks again when
// the node it found went away before its text was read (a document that
// replaced the one the selector was matched in), as waitFor does.
func (b *browser) text(sel string) string {
	b.t.Helper()
	var s string
	var err error
	waitForCondition(30*time.Second, 50*time.Millisecond, func() bool {
		ctx, cancel := context.WithTimeout(b.ctx, 10*time.Second)
		defer cancel()
		s, err = chromedp.Run(ctx, chromedp.Text(chromedp.CSS(sel)))
		return err == nil
	})
	require.NoError(b.t, err, sel)
	return s
}

// waitFor waits until a JavaScript expression is true. It asks again
// every 50 ms: a navigation in between destroys the page's context, and
// the next page is asked afresh.
func (b *browser) waitFor(expr string) {
	b.t.Helper()
	var last error
	if waitForCondition(20*time.Second, 50*time.Millisecond, func() bool {
		ctx, cancel := context.WithTimeout(b.ctx, 5*time.Second)
		defer cancel()
		ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool]("Boolean("+expr+")"))
		last = err
		return err == nil && ok
	}) {
		return
	}
	page, _ := runIn(b, chromedp.Evaluate[string](`location.href + "\n" + document.body.innerText.slice(0, 2000)`))
	b.t.Fatalf("waiting for %s: timed out (last error: %v); the page:\n%s", expr, last, page)
}

// runIn runs one action in b's tab with a timeout.
func runIn[T any](b *browser, a chromedp.Action[T]) (T, error) {
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	return chromedp.Run(ctx, a)
}

// eval runs JavaScript for its effect.
func (b *browser) eval(js string) {
	b.t.Helper()
	_, err := runIn(b, chromedp.Evaluate[chromedp.Void](js))
	require.NoError(b.t, err, js)
}

// setSelect chooses a value of a select element as a user does: the
// change event fires.
func (b *browser) setSelect(sel, value string) {
	b.t.Helper()
	b.eval(fmt.Sprintf(`(() => { const e = document.querySelector(%q); e.value = %q; e.dispatchEvent(new Event("change", {bubbles: true})); })()`, sel, value))
}

// path waits until the page's location is path (with its query).
func (b *browser) path(want string) {
	b.t.Helper()
	b.waitFor(fmt.Sprintf(`location.pathname + location.search === %q && document.readyState === "complete"`, want))
}

// timing records the Navigation Timing figures of the page shown.
func (b *browser) timing(page string) {
	b.t.Helper()
	b.waitFor(`document.readyState === "complete" && performance.getEntriesByType("navigation")[0].loadEventEnd > 0`)
	type nav struct {
		TTFB     float64 `json:"ttfb"`
		DOMReady float64 `json:"domReady"`
		Load     float64 `json:"load"`
	}
	n, err := runIn(b, chromedp.Evaluate[nav](`(() => {
		const n = performance.getEntriesByType("navigation")[0];
		return {ttfb: n.responseStart - n.startTime, domReady: n.domContentLoadedEventEnd - n.startTime, load: n.loadEventEnd - n.startTime};
	})()`))
	require.NoError(b.t, err)
	b.times = append(b.times, pageTime{page, n.TTFB, n.DOMReady, n.Load})
	require.Less(b.t, n.Load, float64(renderBound.Milliseconds()), "page %s took %.0f ms to load", page, n.Load)
}

// open navigates to a console path and measures it.
func (b *browser) open(path, page string) {
	b.t.Helper()
	b.do(chromedp.Navigate(b.base + path))
	b.timing(page)
}

// screenshot writes the whole page as NAME.png.
func (b *browser) screenshot(name string) {
	b.t.Helper()
	png, err := runIn(b, chromedp.FullScreenshot(100))
	require.NoError(b.t, err)
	require.NoError(b.t, os.WriteFile(filepath.Join(b.shot, name+".png"), png, 0o644))
}

// restTraffic runs a REST server with metrics over db and sends it
// requests until ctx ends, at a rate that swings between about 20 and 100
// a second, with a query now and then, so the Health page has a server's
// real metrics to chart. It returns the metrics.
func restTraffic(t *testing.T, ctx context.Context, db *tablestore.DB) *server.Metrics {
	t.Helper()
	metrics := server.NewMetrics()
	h, err := server.New(db, &server.Options{Anonymous: true, Metrics: metrics})
	require.NoError(t, err)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	srv := server.NewHTTPServer(ln.Addr().String(), h)
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	base := "http://" + ln.Addr().String() + "/" + server.DevAccount
	go func() {
		client := &http.Client{Timeout: 5 * time.Second}
		start := time.Now()
		for i := 0; ctx.Err() == nil; i++ {
			path := "/Tables"
			if i%5 == 0 {
				path = "/Orders()?$filter=" + url.QueryEscape("PartitionKey eq '2026-11-03'") + "&$top=50"
			}
			req, _ := http.NewRequestWithContext(ctx, "GET", base+path, nil)
			req.Header.Set("Accept", "application/json;odata=nometadata")
			if resp, err := client.Do(req); err == nil {
				resp.Body.Close()
			}
			rate := 60 + 40*math.Sin(time.Since(start).Seconds()/3)
			time.Sleep(time.Duration(float64(time.Second) / rate)) // sleep: paces the background traffic to its rate
		}
	}()
	return metrics
}

// TestConsoleInBrowser drives the console in headless Chromium through a
// user's session, while a REST server over the same store takes traffic
// whose metrics the Health page charts: create a table, insert an entity of every EDM type,
// query with a filter (seeing a syntax error at its position first) and
// read the plan and what each page examined, page, edit with a stale ETag
// and see the conflict, import a file with the progress bar, turn the
// change feed on and watch writes arrive in the live tail, set a time to
// live, delete the entity and the table. It measures
// each page's load time with Navigation Timing and writes screenshots of
// the main pages.
func TestConsoleInBrowser(t *testing.T) {
	exe := chromiumPath(t)
	bg := context.Background()
	db, err := tablestore.Open(filepath.Join(t.TempDir(), "store"), &tablestore.Options{MemTableSize: 1 << 20})
	require.NoError(t, err)
	defer db.Close()
	trafficCtx, stopTraffic := context.WithCancel(bg)
	defer stopTraffic()
	metrics := restTraffic(t, trafficCtx, db)
	c, err := console.New(db, &console.Options{Metrics: metrics.Handler(), StoreName: "data"})
	require.NoError(t, err)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	srv := &http.Server{Handler: c, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	defer srv.Close()

	shots := *screenshotDir
	if shots == "" {
		shots = t.TempDir()
	}
	require.NoError(t, os.MkdirAll(shots, 0o755))
	alloc, cancelAlloc := chromedp.NewExecAllocator(bg,
		chromedp.ExecPath(exe),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 860),
	)
	defer cancelAlloc()
	ctx, cancelCtx := chromedp.NewContext(alloc)
	defer cancelCtx()
	// The first run starts the browser, which lives as long as the context
	// of that run: it must have no timeout.
	require.NoError(t, chromedp.Do(ctx))
	start := c.StartURL(ln.Addr().String())
	b := &browser{t: t, ctx: ctx, base: strings.TrimSuffix(start[:strings.Index(start, "?")], "/"), shot: shots}

	// Another table with data, so the list has estimates to show.
	orders, err := db.CreateTable(bg, "Orders")
	require.NoError(t, err)
	for i := range 3000 {
		require.NoError(t, orders.Insert(bg, &tablestore.Entity{PartitionKey: fmt.Sprintf("2026-11-%02d", 1+i%28),
			RowKey: fmt.Sprintf("%06d", i), Properties: map[string]any{"Amount": float64(i) * 1.25, "Item": strings.Repeat("x", 200)}}))
	}

	// The token URL starts a session and lands on the tables.
	b.do(chromedp.Navigate(start))
	b.path("/tables")
	b.timing("tables (first visit)")
	require.Contains(t, b.text("#tables"), "Orders")

	// The Health page, opened in a second tab now, charts the metrics
	// while the rest of the session runs.
	healthCtx, cancelHealth := chromedp.NewContext(ctx)
	defer cancelHealth()
	require.NoError(t, chromedp.Do(healthCtx)) // opens the tab, for as long as healthCtx lives
	health := &browser{t: t, ctx: healthCtx, base: b.base, shot: shots}
	health.open("/health", "health")
	require.Equal(t, "Healthy", health.text("#health-word"))

	// Create a table.
	b.do(chromedp.SendKeys(chromedp.CSS("#new-table"), "People"), chromedp.Click(chromedp.CSS("#create")))
	b.path("/tables/People")
	b.timing("table overview")
	require.Contains(t, b.text("#indexes"), "No indexes")
	require.Contains(t, b.text("#ttl-state"), "Off: entities never expire")
	require.Contains(t, b.text("#feed-state"), "Off: changes are not recorded")
	ok, err := db.TableExists(bg, "People")
	require.NoError(t, err)
	require.True(t, ok)

	// Insert an entity with every EDM type, adding rows with the script.
	b.open("/tables/People/entity/new", "new entity")
	b.do(chromedp.SendKeys(chromedp.CSS("#pk"), "a"), chromedp.SendKeys(chromedp.CSS("#rk"), "000"))
	for range 5 {
		b.do(chromedp.Click(chromedp.CSS("#add-prop")))
	}
	typed := [][3]string{
		{"Name", "Edm.String", "Ada Lovelace"},
		{"Age", "Edm.Int32", "36"},
		{"Big", "Edm.Int64", "9007199254740993"},
		{"Score", "Edm.Double", "0.1"},
		{"Active", "Edm.Boolean", "false"},
		{"Born", "Edm.DateTime", "1815-12-10T00:00:00.0000001Z"},
		{"Id", "Edm.Guid", "0f8fad5b-d9cb-469f-a165-70867728950e"},
		{"Raw", "Edm.Binary", "aGVsbG8="},
	}
	for i, p := range typed {
		b.do(chromedp.SendKeys(chromedp.CSS(fmt.Sprintf(`[name="p.%d.name"]`, i)), p[0]))
		b.setSelect(fmt.Sprintf(`[name="p.%d.type"]`, i), p[1])
		if p[1] == "Edm.Boolean" {
			b.setSelect(fmt.Sprintf(`[name="p.%d.value"]`, i), p[2])
			require.Equal(t, "SELECT", b.tagOf(fmt.Sprintf(`[name="p.%d.value"]`, i)), "the script swapped in a choice")
		} else {
			b.do(chromedp.SendKeys(chromedp.CSS(fmt.Sprintf(`[name="p.%d.value"]`, i)), p[2]))
		}
	}
	b.screenshot("entity-new")
	b.do(chromedp.Click(chromedp.CSS("#save")))
	b.waitFor(`document.querySelector("#saved") !== null`)
	b.timing("entity")
	e, err := db.Table("People").Get(bg, "a", "000", nil)
	require.NoError(t, err)
	g, _ := edm.ParseGUID("0f8fad5b-d9cb-469f-a165-70867728950e")
	require.Equal(t, map[string]any{"Name": "Ada Lovelace", "Age": int32(36), "Big": int64(9007199254740993), "Score": 0.1,
		"Active": false, "Born": time.Date(1815, 12, 10, 0, 0, 0, 100, time.UTC), "Id": g, "Raw": []byte("hello")}, e.Properties)
	b.screenshot("entity")

	// More entities, for a filter and pages.
	people := db.Table("People")
	for i := 1; i <= 130; i++ {
		pk := []string{"a", "b", "c"}[i%3]
		require.NoError(t, people.Insert(bg, &tablestore.Entity{PartitionKey: pk, RowKey: fmt.Sprintf("%03d", i),
			Properties: map[string]any{"Name": fmt.Sprintf("person %d", i), "Age": int32(18 + i%60), "Active": i%4 != 0,
				"Joined": time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(i) * 36 * time.Hour)}}))
	}

	// A secondary index, created from the table's page.
	b.open("/tables/People", "table overview (before an index)")
	b.do(chromedp.SendKeys(chromedp.CSS("#index-name"), "ByName"), chromedp.SendKeys(chromedp.CSS("#index-properties"), "Name"),
		chromedp.Click(chromedp.CSS("#create-index-button")))
	b.waitFor(`document.querySelector("#index-notice") !== null`)
	require.Equal(t, "Index ByName is ready.", b.text("#index-notice"))
	b.open("/tables/People/query?"+url.Values{"filter": {"Name eq 'person 42'"}}.Encode(), "query (through an index)")
	require.Equal(t, "ByName", b.text("#plan-index"))
	require.Equal(t, "1", b.text("#returned"))
	require.Equal(t, "1", b.text("#index-entries"), "one index entry read for the one match")

	// Query: a syntax error is shown at its position as it is typed; the
	// fixed filter runs and its plan is drawn.
	b.open("/tables/People/query", "query (50 rows)")
	require.Equal(t, "table scan", b.text("#plan-kind"))
	b.do(chromedp.SendKeys(chromedp.CSS("#filter"), "Age gt 30 and and Active"))
	b.waitFor(`document.querySelector("#filter-live-error") !== null`)
	require.Contains(t, b.text("#filter-live-error"), "column 15")
	require.Equal(t, "a", b.text("#filter-live-caret mark"))
	b.screenshot("query-error")
	b.eval(`document.querySelector("#filter").value = ""`)
	b.do(chromedp.SendKeys(chromedp.CSS("#filter"), "PartitionKey eq 'a' and Age gt 30"))
	b.waitFor(`document.querySelector("#filter-ok") !== null`)
	require.Contains(t, b.text("#filter-ok"), "partition scan")
	b.setSelect("#top", "20")
	b.do(chromedp.Click(chromedp.CSS("#run")))
	b.waitFor(`location.search.includes("filter=") && document.readyState === "complete"`)
	b.timing("query (filtered)")
	require.Equal(t, "partition scan", b.text("#plan-kind"))
	require.Equal(t, "PartitionKey = 'a'", b.text("#ranges li"))
	require.Equal(t, "Age gt 30", b.text("#residual"))
	first := b.text("#returned")
	require.Equal(t, "20", first)
	// What the page examined, against what it returned: partition a
	// holds entities the residual filter drops.
	examined1 := b.number("#examined")
	require.Greater(t, examined1, 20, b.text("#scanned"))
	require.Contains(t, b.text("#scanned"), fmt.Sprintf("examined %d, returned 20", examined1))
	require.Equal(t, "20", b.value("#yield"))
	b.screenshot("query")

	// The next page continues the query, and the totals add up both.
	b.do(chromedp.Click(chromedp.CSS("#next-page")))
	b.waitFor(`location.search.includes("page=2") && document.readyState === "complete"`)
	require.Contains(t, b.text("#page-info"), "Page 2")
	rows := b.count("#grid tbody tr")
	require.Greater(t, rows, 0)
	require.Contains(t, b.text("#grid"), "person")
	require.Equal(t, examined1+b.number("#examined"), b.number("#total-examined"))
	require.Equal(t, 20+rows, b.number("#total-returned"))
	b.screenshot("query-next")

	// A page of 1000 rows, for its render time.
	b.open("/tables/Orders/query?top=1000", "query (1000 rows)")
	require.Equal(t, 1000, b.count("#grid tbody tr"))

	// A filter that cannot match warns as it is typed.
	b.open("/tables/People/query?"+url.Values{"filter": {"PartitionKey eq 'c'"}, "top": {"10"}}.Encode(), "query (grid tools)")
	b.eval(`document.querySelector("#filter").value = ""`)
	b.do(chromedp.SendKeys(chromedp.CSS("#filter"), "Name gt 5"))
	b.waitFor(`document.querySelector(".filter-warning") !== null`)
	require.Contains(t, b.text(".filter-warning"), "Name is compared (gt) with a literal of type Edm.Int32")

	// The column chooser hides a column, header and cells.
	b.eval(`document.querySelector("#column-chooser").open = true`)
	b.do(chromedp.Click(chromedp.CSS(`.col-toggle[data-col="Age"]`)))
	b.waitFor(`document.querySelector('th[data-col="Age"]').hidden`)
	ageAt := `[...document.querySelectorAll("#grid thead th")].findIndex(th => th.dataset.col === "Age")`
	b.waitFor(`[...document.querySelectorAll("#grid tbody tr")].every(tr => tr.children[` + ageAt + `].hidden)`)
	b.do(chromedp.Click(chromedp.CSS(`.col-toggle[data-col="Age"]`)))
	b.waitFor(`!document.querySelector('th[data-col="Age"]').hidden`)

	// Two rows selected and deleted, after the confirmation.
	var picked []url.Values
	for i := 1; i <= 2; i++ {
		v, err := url.ParseQuery(b.value(fmt.Sprintf(`#grid tbody tr:nth-child(%d) input[name="e"]`, i)))
		require.NoError(t, err)
		picked = append(picked, v)
		b.do(chromedp.Click(chromedp.CSS(fmt.Sprintf(`#grid tbody tr:nth-child(%d) input[name="e"]`, i))))
	}
	require.Equal(t, "Delete selected (2)", b.text("#delete-selected"))
	b.eval(`window.confirm = () => true`)
	b.do(chromedp.Click(chromedp.CSS("#delete-selected")))
	b.waitFor(`document.querySelector("#query-notice") !== null && document.readyState === "complete"`)
	require.Equal(t, "2 entities deleted.", b.text("#query-notice"))
	for _, v := range picked {
		_, err := people.Get(bg, v.Get("pk"), v.Get("rk"), nil)
		require.ErrorIs(t, err, tablestore.ErrResourceNotFound, v.Get("rk"))
	}

	// Edit with a stale ETag: someone else writes after the page loaded.
	b.open("/tables/People/entity?pk=a&rk=000", "entity (edit)")
	require.NoError(t, people.Update(bg, &tablestore.Entity{PartitionKey: "a", RowKey: "000",
		Properties: map[string]any{"Name": "Ada, Countess of Lovelace"}}, tablestore.Merge, tablestore.ETagAny))
	b.eval(`[...document.querySelectorAll(".prop-name")].find(e => e.value === "Age").closest("tr").querySelector(".prop-value").value = "37"`)
	b.do(chromedp.Click(chromedp.CSS("#save")))
	b.waitFor(`document.querySelector("#conflict") !== null && document.readyState === "complete"`)
	require.Contains(t, b.text("#conflict"), "Conflict: the entity changed after you opened it")
	require.Contains(t, b.text("#conflict"), "Ada, Countess of Lovelace")
	b.screenshot("conflict")
	e, err = people.Get(bg, "a", "000", nil)
	require.NoError(t, err)
	require.Equal(t, int32(36), e.Properties["Age"], "the stale edit was not written")
	require.Equal(t, "Ada, Countess of Lovelace", e.Properties["Name"])

	// Import a file with the progress bar: 3 MiB, so it goes in chunks.
	var lines strings.Builder
	for i := range 24000 {
		fmt.Fprintf(&lines, `{"PartitionKey":"imp%02d","RowKey":"%06d","N":%d,"Note":"%s"}`+"\n", i/1000, i, i, strings.Repeat("n", 60))
	}
	file := filepath.Join(t.TempDir(), "people.jsonl")
	require.NoError(t, os.WriteFile(file, []byte(lines.String()), 0o644))
	b.open("/tables/People/import", "import")
	b.do(chromedp.SetUploadFiles(chromedp.CSS("#file"), []string{file}))
	b.do(chromedp.Click(chromedp.CSS("#import-start")))
	b.waitFor(`document.querySelector("#import-status").textContent.startsWith("Done")`)
	require.Contains(t, b.text("#import-status"), "24,000 imported, 0 rejected")
	require.Equal(t, "100", b.value("#import-progress"))
	b.screenshot("import")
	n := 0
	for _, err := range people.Query(bg, tablestore.Query{Filter: "PartitionKey ge 'imp' and PartitionKey lt 'imq'"}) {
		require.NoError(t, err)
		n++
	}
	require.Equal(t, 24000, n)

	// The change feed: off, turned on from the Changes page once
	// confirmed, then tailed live while the store takes writes.
	b.open("/tables/People/changes", "changes (feed off)")
	require.Contains(t, b.text("#changes-off"), "is off")
	b.setSelect("#feed-images", "new")
	b.do(chromedp.Click(chromedp.CSS("#feed-save")))
	time.Sleep(300 * time.Millisecond) // sleep: a navigation that does not happen sends no event; this is the time one would take, had the form been sent
	require.Equal(t, "/tables/People/changes", b.pathname(), "the unconfirmed form is not sent")
	b.do(chromedp.Click(chromedp.CSS("#feed-confirm")), chromedp.Click(chromedp.CSS("#feed-save")))
	b.waitFor(`document.querySelector("#changes-notice") !== null`)
	b.timing("changes (live)")
	st, err := people.ChangeFeed(bg)
	require.NoError(t, err)
	require.True(t, st.Enabled)
	require.Equal(t, tablestore.ImagesNew, st.Options.Images)
	b.waitFor(`document.querySelector("#tail-state").textContent.startsWith("Live")`)
	require.NoError(t, people.Insert(bg, &tablestore.Entity{PartitionKey: "c", RowKey: "live-1",
		Properties: map[string]any{"Name": "Grace Hopper", "Age": int32(85)}}))
	b.waitFor(`document.querySelectorAll("#changes tbody tr").length === 1`)
	row := b.text("#changes tbody tr")
	require.Contains(t, row, "insert")
	require.Contains(t, row, "live-1")
	require.Contains(t, row, "Name=Grace Hopper")
	live, err := people.Get(bg, "c", "live-1", nil)
	require.NoError(t, err)
	require.Contains(t, row, string(live.ETag))
	require.Contains(t, row, live.Timestamp.UTC().Format("2006-01-02T15:04:05.0000000Z"))
	require.NoError(t, people.Update(bg, &tablestore.Entity{PartitionKey: "c", RowKey: "live-1",
		Properties: map[string]any{"Age": int32(86)}}, tablestore.Merge, tablestore.ETagAny))
	require.NoError(t, people.NewBatch().
		Insert(&tablestore.Entity{PartitionKey: "d", RowKey: "t1", Properties: map[string]any{"Name": "in a transaction"}}).
		Insert(&tablestore.Entity{PartitionKey: "d", RowKey: "t2", Properties: map[string]any{"Name": "in a transaction"}}).
		Upsert(&tablestore.Entity{PartitionKey: "d", RowKey: "t3", Properties: map[string]any{"Name": "in a transaction"}}, tablestore.Replace).
		Submit(bg))
	require.NoError(t, people.Delete(bg, "c", "live-1", tablestore.ETagAny))
	b.waitFor(`document.querySelectorAll("#changes tbody tr").length === 6`)
	require.Contains(t, b.text("#changes tbody tr"), "delete", "newest first")
	require.Contains(t, b.text("#changes"), "(3/3)", "the transaction's third action")
	lastCursor := b.text("#tail-cursor")
	b.screenshot("changes")
	// From the beginning: the same six changes, oldest last.
	b.do(chromedp.Click(chromedp.CSS("#from-beginning")), chromedp.Click(chromedp.CSS("#changes-start")))
	b.waitFor(`location.search.includes("from=beginning") && document.querySelectorAll("#changes tbody tr").length === 6`)
	b.timing("changes (from the beginning)")
	require.Equal(t, lastCursor, b.text("#tail-cursor"))
	require.Contains(t, b.text("#changes tbody tr:last-child"), "live-1")

	// Time to live, set from the table's page once confirmed.
	b.open("/tables/People", "table overview (settings)")
	b.do(chromedp.SendKeys(chromedp.CSS("#ttl-default"), "30d"), chromedp.SendKeys(chromedp.CSS("#ttl-property"), "ExpiresAt"),
		chromedp.Click(chromedp.CSS("#ttl-confirm")), chromedp.Click(chromedp.CSS("#ttl-save")))
	b.waitFor(`document.querySelector("#settings-notice") !== null`)
	b.timing("table overview (TTL set)")
	ttl, err := people.TTL(bg)
	require.NoError(t, err)
	require.Equal(t, tablestore.TTL{Default: 30 * 24 * time.Hour, Property: "ExpiresAt"}, ttl)
	require.Contains(t, b.text("#ttl-state"), "30d after their last write")
	require.Contains(t, b.text("#ttl-expired"), "0 expired")
	require.Contains(t, b.text("#feed-state"), "with each written entity")

	// Health, with live charts of the server's metrics.
	health.waitFor(`document.querySelectorAll("#chart-rps polyline").length > 0 && document.querySelector("#chart-rps polyline").getAttribute("points").split(" ").length >= 6`)
	require.Contains(t, health.text("#metrics-status"), "requests/s")
	health.screenshot("health")
	b.times = append(b.times, health.times...)

	// The tables, with their estimates.
	b.open("/tables", "tables")
	require.Contains(t, b.text("#tables"), "People")
	b.screenshot("tables")
	b.open("/tables/People", "table overview (People)")
	b.screenshot("table")

	// Delete the entity, then the table, each confirmed.
	b.open("/tables/People/entity?pk=a&rk=000", "entity (delete)")
	b.do(chromedp.Click(chromedp.CSS("#delete-entity")))
	b.waitFor(`document.querySelector("#delete-entity-confirm") !== null`)
	b.do(chromedp.Click(chromedp.CSS("#delete-entity-confirm")))
	b.waitFor(`document.querySelector("#query-notice") !== null`)
	_, err = people.Get(bg, "a", "000", nil)
	require.ErrorIs(t, err, tablestore.ErrResourceNotFound)

	b.open("/tables/People/delete", "delete table")
	b.do(chromedp.SendKeys(chromedp.CSS("#confirm"), "People"), chromedp.Click(chromedp.CSS("#delete-table-confirm")))
	b.waitFor(`document.querySelector("#tables-notice") !== null`)
	ok, err = db.TableExists(bg, "People")
	require.NoError(t, err)
	require.False(t, ok)

	var report strings.Builder
	for _, p := range b.times {
		fmt.Fprintf(&report, "\n  %-26s first byte %6.1f ms  DOM ready %6.1f ms  loaded %6.1f ms", p.page, p.ttfb, p.domReady, p.load)
	}
	t.Logf("page load times (Navigation Timing, headless Chromium, local store; bound %s, goal 200 ms):%s", renderBound, report.String())
	t.Logf("screenshots in %s", shots)
}

// number returns an element's text as a whole number, without
// thousands separators.
func (b *browser) number(sel string) int {
	b.t.Helper()
	text := strings.ReplaceAll(b.text(sel), ",", "")
	var n int
	_, err := fmt.Sscanf(text, "%d", &n)
	require.NoError(b.t, err, "%s: %q", sel, text)
	return n
}

// pathname returns the page's path.
func (b *browser) pathname() string {
	b.t.Helper()
	v, err := runIn(b, chromedp.Evaluate[string](`location.pathname`))
	require.NoError(b.t, err)
	return v
}

// count returns how many elements match a CSS selector.
func (b *browser) count(sel string) int {
	b.t.Helper()
	n, err := runIn(b, chromedp.Evaluate[int](fmt.Sprintf(`document.querySelectorAll(%q).length`, sel)))
	require.NoError(b.t, err)
	return n
}

// value returns an element's value property as text.
func (b *browser) value(sel string) string {
	b.t.Helper()
	v, err := runIn(b, chromedp.Evaluate[string](fmt.Sprintf(`String(document.querySelector(%q).value)`, sel)))
	require.NoError(b.t, err)
	return v
}

// tagOf returns an element's tag name.
func (b *browser) tagOf(sel string) string {
	b.t.Helper()
	v, err := runIn(b, chromedp.Evaluate[string](fmt.Sprintf(`document.querySelector(%q).tagName`, sel)))
	require.NoError(b.t, err)
	return v
}
