package server

import (
	"bufio"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"
	"github.com/tablestore/tablestore"
)

// TestExchanges replays the HTTP exchanges in testdata/exchanges: each
// "request" holds a request line, headers, a blank line and a body; the
// output is the status, the response headers that matter and the body,
// with request ids, times and ETags masked and a byte-order mark shown as
// <BOM>. Requests are signed with
// SharedKeyLite unless the command says "unsigned"; x-ms-version is
// 2019-02-02 unless the request names one; "crlf" turns the
// body's line endings into CRLF. Rewrite with -rewrite.
func TestExchanges(t *testing.T) {
	db, err := tablestore.OpenInMemory(&tablestore.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	h, err := New(db, nil)
	if err != nil {
		t.Fatal(err)
	}
	datadriven.RunTest(t, "testdata/exchanges", func(t *testing.T, d *datadriven.TestData) string {
		switch d.Cmd {
		case "request":
			r := parseTestRequest(t, d.Input, d.HasArg("crlf"))
			if !d.HasArg("unsigned") {
				signLite(r, DevAccount, DevKey, time.Now())
			}
			if d.HasArg("old") {
				signLite(r, DevAccount, DevKey, time.Now().Add(-16*time.Minute))
			}
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			return formatResponse(w.Result())
		default:
			t.Fatalf("unknown command %s", d.Cmd)
			return ""
		}
	})
}

// parseTestRequest reads "METHOD target", headers, blank line, body.
func parseTestRequest(t *testing.T, in string, crlf bool) *http.Request {
	t.Helper()
	head, body, _ := strings.Cut(in, "\n\n")
	lines := strings.Split(head, "\n")
	method, target, _ := strings.Cut(lines[0], " ")
	if crlf {
		body = strings.ReplaceAll(body, "\n", "\r\n")
	}
	r := httptest.NewRequest(method, "http://127.0.0.1:10002"+target, strings.NewReader(body))
	r.RequestURI = target
	r.Host = "127.0.0.1:10002"
	for _, l := range lines[1:] {
		k, v, ok := strings.Cut(l, ":")
		if !ok {
			t.Fatalf("bad header line %q", l)
		}
		r.Header.Add(strings.TrimSpace(k), strings.TrimSpace(v))
	}
	if r.Header.Get("x-ms-version") == "" {
		r.Header.Set("x-ms-version", "2019-02-02")
	}
	return r
}

// signLite signs r with SharedKeyLite as the SDKs do.
func signLite(r *http.Request, account, key string, at time.Time) {
	date := at.UTC().Format(http.TimeFormat)
	r.Header.Set("x-ms-date", date)
	path := r.RequestURI
	if i := strings.IndexByte(path, '?'); i >= 0 {
		path = path[:i]
	}
	res := "/" + account + path
	if c := r.URL.Query().Get("comp"); c != "" {
		res += "?comp=" + c
	}
	k, _ := base64.StdEncoding.DecodeString(key)
	m := hmac.New(sha256.New, k)
	m.Write([]byte(date + "\n" + res))
	r.Header.Set("Authorization", "SharedKeyLite "+account+":"+base64.StdEncoding.EncodeToString(m.Sum(nil)))
}

var (
	maskUUID  = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
	maskTime  = regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d(:|%3A)\d\d(:|%3A)\d\d\.\d{7}Z`)
	maskStamp = regexp.MustCompile(`<LastSyncTime>[^<]*</LastSyncTime>`)
)

// shownHeaders are the response headers the exchanges record.
var shownHeaders = []string{"Content-Type", "Location", "DataServiceId", "Preference-Applied", "ETag",
	"X-Ms-Error-Code", "X-Ms-Continuation-Nextpartitionkey", "X-Ms-Continuation-Nextrowkey",
	"X-Ms-Continuation-Nexttablename", "Retry-After", "Access-Control-Allow-Origin",
	"Access-Control-Expose-Headers", "Vary"}

func mask(s string) string {
	s = maskUUID.ReplaceAllString(s, "<id>")
	s = maskTime.ReplaceAllString(s, "<time>")
	return maskStamp.ReplaceAllString(s, "<LastSyncTime><date></LastSyncTime>")
}

func formatResponse(resp *http.Response) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d %s\n", resp.StatusCode, http.StatusText(resp.StatusCode))
	var names []string
	for k := range resp.Header {
		if slices.ContainsFunc(shownHeaders, func(h string) bool { return strings.EqualFold(h, k) }) {
			names = append(names, k)
		}
	}
	slices.Sort(names)
	for _, k := range names {
		fmt.Fprintf(&b, "%s: %s\n", k, mask(resp.Header[k][0]))
	}
	for _, k := range []string{"X-Ms-Request-Id", "Date", "X-Ms-Version"} {
		if resp.Header.Get(k) == "" {
			fmt.Fprintf(&b, "MISSING %s\n", k)
		}
	}
	if _, err := http.ParseTime(resp.Header.Get("Date")); err != nil || !strings.HasSuffix(resp.Header.Get("Date"), "GMT") {
		fmt.Fprintf(&b, "BAD Date %q\n", resp.Header.Get("Date"))
	}
	writeExchangeBody(&b, resp.Body, "\ufeff", "<BOM>")
	return b.String()
}

// writeExchangeBody appends body to b as an exchange shows it: after a
// blank line, masked, CRLF as ⏎ and a line break, each further old/new
// pair replaced, ending with a line break.
func writeExchangeBody(b *strings.Builder, body io.Reader, oldnew ...string) {
	raw, _ := io.ReadAll(body)
	if len(raw) == 0 {
		return
	}
	b.WriteString("\n")
	b.WriteString(strings.NewReplacer(oldnew...).Replace(strings.ReplaceAll(mask(string(raw)), "\r\n", "⏎\n")))
	if !strings.HasSuffix(string(raw), "\n") {
		b.WriteString("\n")
	}
}

// TestBatchParserTolerance checks the JavaScript SDK's batch form: bare
// LF, a preamble, lowercase headers, no Content-Length and a blank line
// before the body, and sub-request URLs with extra query parameters.
func TestBatchParserTolerance(t *testing.T) {
	db, _ := tablestore.OpenInMemory(&tablestore.Options{NoSync: true})
	defer db.Close()
	h, _ := New(db, &Options{Anonymous: true})
	if _, err := db.CreateTable(context.Background(), "jst"); err != nil {
		t.Fatal(err)
	}
	body := "preamble text\n\n--batch_1\ncontent-type: multipart/mixed; boundary=changeset_1\n\n" +
		"--changeset_1\ncontent-type: application/http\ncontent-transfer-encoding: binary\n\n" +
		"POST http://127.0.0.1:10002/devstoreaccount1/jst?tn=jst&api-version=2019-02-02 HTTP/1.1\ncontent-type: application/json;odata=nometadata\nprefer: return-no-content\n\n\n" +
		`{"PartitionKey":"p","RowKey":"1","A":1}` + "\n" +
		"--changeset_1\ncontent-type: application/http\ncontent-transfer-encoding: binary\n\n" +
		"POST http://127.0.0.1:10002/devstoreaccount1/jst(PartitionKey='p',RowKey='2') HTTP/1.1\nx-http-method: MERGE\ncontent-type: application/json\n\n" +
		`{"PartitionKey":"p","RowKey":"2","B":2}` + "\n" +
		"--changeset_1--\n--batch_1--\n"
	r := httptest.NewRequest("POST", "/devstoreaccount1/$batch", strings.NewReader(body))
	r.Header.Set("Content-Type", "multipart/mixed; boundary=batch_1")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	out := w.Body.String()
	if w.Code != http.StatusAccepted || strings.Count(out, "HTTP/1.1 204") != 2 || strings.Contains(out, "{") {
		t.Fatalf("status %d:\n%s", w.Code, out)
	}
	if !strings.HasPrefix(out, "--batchresponse_") || !strings.Contains(out, "\r\n\r\n--changesetresponse_") {
		t.Fatalf("envelope:\n%s", out)
	}
	if !strings.Contains(out, "RowKey='1')") {
		t.Fatalf("no Location with RowKey='1':\n%s", out)
	}
	for _, rk := range []string{"1", "2"} {
		if _, err := db.Table("jst").Get(context.Background(), "p", rk, nil); err != nil {
			t.Fatalf("entity %s: %v", rk, err)
		}
	}
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		if l := sc.Text(); strings.HasPrefix(l, "ETag: ") && !strings.HasPrefix(l, `ETag: W/"datetime'`) {
			t.Fatalf("etag line %q", l)
		}
	}
}
