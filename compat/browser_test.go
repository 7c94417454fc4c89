package compat

import (
	"bufio"
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/chromedp/chromedp"
	"github.com/tablestore/tablestore/server"
	"github.com/tablestore/tablestore/tablestoretest"
)

// needBrowser returns Debian's Chromium and compat/js's esbuild, or skips
// the test (fails it when TABLESTORE_REQUIRE_BROWSER is set, as CI does).
func needBrowser(t *testing.T) (chromium, esbuild string) {
	t.Helper()
	missing := func(what string) {
		if os.Getenv("TABLESTORE_REQUIRE_BROWSER") != "" {
			t.Fatalf("%s is missing", what)
		}
		t.Skipf("%s is missing", what)
	}
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			chromium = p
			break
		}
	}
	if chromium == "" {
		missing("chromium (apt-get install chromium)")
	}
	esbuild, _ = filepath.Abs(filepath.Join("js", "node_modules", ".bin", "esbuild"))
	if _, err := os.Stat(esbuild); err != nil {
		missing("esbuild (npm ci in compat/js)")
	}
	return chromium, esbuild
}

// browserEndpoint starts the server the page talks to: the tablestore
// binary in $TABLESTORE_BIN (`tablestore serve`, as CI builds it), else
// the same handler in-process. It returns the table endpoint and a
// connection string.
func browserEndpoint(t *testing.T) (endpoint, cs string) {
	t.Helper()
	bin := os.Getenv("TABLESTORE_BIN")
	if bin == "" {
		srv := tablestoretest.NewServer(t)
		return srv.URL() + "/" + srv.Account(), srv.ConnectionString()
	}
	cmd := exec.Command(bin, "serve", "--in-memory", "--addr", "127.0.0.1:0", "--log-level", "warn")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if m := regexp.MustCompile(`^serve: listening on (\S+)$`).FindStringSubmatch(sc.Text()); m != nil {
				addr <- m[1]
			}
		}
	}()
	select {
	case a := <-addr:
		endpoint = "http://" + a + "/" + server.DevAccount
	case <-time.After(30 * time.Second):
		t.Fatal("tablestore serve did not start")
	}
	return endpoint, "DefaultEndpointsProtocol=http;AccountName=" + server.DevAccount + ";AccountKey=" + server.DevKey + ";TableEndpoint=" + endpoint
}

// browserResult is what page.html leaves in window.__result.
type browserResult struct {
	OK     bool       `json:"ok"`
	Steps  []string   `json:"steps"`
	Pages  [][]string `json:"pages"`
	Error  string     `json:"error"`
	Code   string     `json:"code"`
	Status int        `json:"status"`
}

// TestBrowserCORS runs @azure/data-tables' browser build in headless
// Chromium, on a page served from another origin, with a SAS URL: without
// a CORS rule the browser blocks every call (and nothing reaches the
// store); with a rule set through the Go SDK's SetProperties it creates
// a table, inserts, reads, updates, submits a batch and queries in pages.
func TestBrowserCORS(t *testing.T) {
	chromium, esbuild := needBrowser(t)
	dir := t.TempDir()
	bundle := filepath.Join(dir, "bundle.js")
	out, err := exec.Command(esbuild, filepath.Join("js", "browser", "entry.js"), "--bundle", "--platform=browser",
		"--format=iife", "--log-level=warning", "--outfile="+bundle).CombinedOutput()
	if err != nil {
		t.Fatalf("esbuild: %v\n%s", err, out)
	}
	page, err := os.ReadFile(filepath.Join("js", "browser", "page.html"))
	if err != nil {
		t.Fatal(err)
	}
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/":
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			_, _ = w.Write(page)
		case "/bundle.js":
			w.Header().Set("Content-Type", "text/javascript")
			http.ServeFile(w, r, bundle)
		default:
			http.NotFound(w, r)
		}
	}))
	defer site.Close()

	endpoint, cs := browserEndpoint(t)
	svc, err := aztables.NewServiceClientFromConnectionString(cs, nil)
	if err != nil {
		t.Fatal(err)
	}
	sasURL, err := svc.GetAccountSASURL(aztables.AccountSASResourceTypes{Service: true, Container: true, Object: true},
		aztables.AccountSASPermissions{Read: true, Write: true, Delete: true, List: true, Add: true, Create: true, Update: true, Process: true},
		time.Now().Add(-time.Minute), time.Now().Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(sasURL)
	if err != nil {
		t.Fatal(err)
	}

	alloc, cancel := chromedp.NewExecAllocator(context.Background(), append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium), chromedp.NoSandbox, chromedp.DisableGPU, chromedp.Headless,
		chromedp.UserDataDir(filepath.Join(dir, "profile")))...)
	defer cancel()
	run := func(table string) browserResult {
		t.Helper()
		ctx, cancel := chromedp.NewContext(alloc)
		defer cancel()
		ctx, cancel2 := context.WithTimeout(ctx, 90*time.Second)
		defer cancel2()
		frag := url.Values{"endpoint": {endpoint}, "sas": {u.RawQuery}, "table": {table}}.Encode()
		if _, err := chromedp.Run(ctx, chromedp.Navigate(site.URL+"/#"+frag)); err != nil {
			t.Fatalf("chromium: %v", err)
		}
		res, err := chromedp.Run(ctx, chromedp.Poll[browserResult]("window.__result", chromedp.WithPollingTimeout(60*time.Second)))
		if err != nil {
			t.Fatalf("chromium: %v", err)
		}
		return res
	}
	exists := func(table string) bool {
		p := svc.NewListTablesPager(&aztables.ListTablesOptions{Filter: to.Ptr("TableName eq '" + table + "'")})
		page, err := p.NextPage(ctx(t))
		if err != nil {
			t.Fatal(err)
		}
		return len(page.Tables) > 0
	}

	// No CORS rule: the browser refuses the cross-origin calls.
	res := run("blocked")
	if res.OK || len(res.Steps) != 0 || res.Code != "REQUEST_SEND_ERROR" {
		t.Fatalf("without a CORS rule the page was not blocked: %+v", res)
	}
	t.Logf("without a rule: %+v", res)
	if exists("blocked") {
		t.Fatal("the blocked page created its table")
	}

	_, err = svc.SetProperties(ctx(t), aztables.ServiceProperties{Cors: []*aztables.CorsRule{{
		AllowedOrigins:  to.Ptr(site.URL),
		AllowedMethods:  to.Ptr("DELETE,GET,HEAD,MERGE,POST,OPTIONS,PUT,PATCH"),
		AllowedHeaders:  to.Ptr("*"),
		ExposedHeaders:  to.Ptr("*"),
		MaxAgeInSeconds: to.Ptr(int32(60)),
	}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	res = run("allowed")
	if !res.OK {
		t.Fatalf("with a CORS rule the page failed: %+v", res)
	}
	t.Logf("with a rule: %+v", res)
	want := [][]string{{"1", "2"}, {"3", "4"}, {"5"}}
	if len(res.Pages) != len(want) {
		t.Fatalf("pages %v, want %v", res.Pages, want)
	}
	for i := range want {
		if strings.Join(res.Pages[i], ",") != strings.Join(want[i], ",") {
			t.Fatalf("pages %v, want %v", res.Pages, want)
		}
	}
	got, err := svc.NewClient("allowed").GetEntity(ctx(t), "p", "1", nil)
	if err != nil || !strings.Contains(string(got.Value), `"n":2`) {
		t.Fatalf("the page's update is not in the store: %s %v", got.Value, err)
	}
}
