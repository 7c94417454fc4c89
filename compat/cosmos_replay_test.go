package compat

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tablestore/tablestore/server"
	"github.com/tablestore/tablestore/tablestoretest"
)

// The Go SDK's recordings of its tests against a real Cosmos DB for
// Table account (aztables v0.7.0's testdata/recordings/*_cosmos.json,
// in that module's zip) replayed against the Cosmos flavor.

// cosmosRecordingsDir is where the recordings are: the directory
// $TABLESTORE_COSMOS_RECORDINGS names, else aztables v0.7.0's in the Go
// module cache (go mod download github.com/Azure/azure-sdk-for-go/sdk/data/aztables@v0.7.0);
// "" when neither is there.
func cosmosRecordingsDir() string {
	if d := os.Getenv("TABLESTORE_COSMOS_RECORDINGS"); d != "" {
		return d
	}
	out, err := exec.Command("go", "env", "GOMODCACHE").Output()
	if err != nil {
		return ""
	}
	d := filepath.Join(strings.TrimSpace(string(out)), "github.com", "!azure", "azure-sdk-for-go", "sdk", "data", "aztables@v0.7.0", "testdata", "recordings")
	if _, err := os.Stat(d); err != nil {
		return ""
	}
	return d
}

type recording struct {
	Entries []struct {
		RequestURI      string            `json:"RequestUri"`
		RequestMethod   string            `json:"RequestMethod"`
		RequestHeaders  map[string]string `json:"RequestHeaders"`
		RequestBody     json.RawMessage   `json:"RequestBody"`
		StatusCode      int               `json:"StatusCode"`
		ResponseHeaders map[string]string `json:"ResponseHeaders"`
		ResponseBody    json.RawMessage   `json:"ResponseBody"`
	}
}

// TestCosmosRecordings replays each recorded request against a fresh
// Cosmos-flavored server and compares the answer with Cosmos DB's: the
// status, the error code, the content type, which of the headers that
// tell Storage and Cosmos apart are there, continuation headers, the
// order of the entities a query gives, and a batch's parts (compareParts).
// Continuation tokens and ETags in later requests, batch bodies
// included, are swapped for the ones the server gave.
func TestCosmosRecordings(t *testing.T) {
	dir := cosmosRecordingsDir()
	if dir == "" {
		if os.Getenv("TABLESTORE_REQUIRE_COSMOS_RECORDINGS") != "" {
			t.Fatal("no Cosmos DB recordings, and TABLESTORE_REQUIRE_COSMOS_RECORDINGS is set")
		}
		t.Skip("no Cosmos DB recordings: go mod download github.com/Azure/azure-sdk-for-go/sdk/data/aztables@v0.7.0, or set TABLESTORE_COSMOS_RECORDINGS")
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*", "*_cosmos.json"))
	if len(files) == 0 {
		t.Fatalf("no *_cosmos.json under %s", dir)
	}
	exchanges := 0
	for _, f := range files {
		t.Run(strings.TrimSuffix(filepath.Base(f), "_cosmos.json"), func(t *testing.T) {
			raw, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			var rec recording
			if err := json.Unmarshal(raw, &rec); err != nil {
				t.Fatal(err)
			}
			srv := tablestoretest.NewServerWithOptions(t, &server.Options{Account: server.CosmosDevAccount,
				Keys: []string{server.CosmosDevKey}, Anonymous: true, Cosmos: &server.Cosmos{}})
			tokens := map[string]string{} // Cosmos's continuation values and ETags -> the server's
			for i, e := range rec.Entries {
				exchanges++
				u, err := url.Parse(e.RequestURI)
				if err != nil {
					t.Fatal(err)
				}
				q := u.Query()
				for _, k := range []string{"NextPartitionKey", "NextRowKey", "NextTableName"} {
					if v, ok := tokens[q.Get(k)]; ok && q.Get(k) != "" {
						q.Set(k, v)
					}
				}
				u.RawQuery = q.Encode()
				origin := u.Scheme + "://" + u.Host
				body := bytes.ReplaceAll(replayBody(e.RequestBody), []byte(origin), []byte(srv.URL()))
				for recorded, ours := range tokens {
					if strings.HasPrefix(recorded, `W/"`) { // an ETag, which a batch's If-Match may hold
						body = bytes.ReplaceAll(body, []byte(recorded), []byte(ours))
					}
				}
				req, err := http.NewRequest(e.RequestMethod, srv.URL()+u.EscapedPath()+"?"+u.RawQuery, bytes.NewReader(body))
				if err != nil {
					t.Fatal(err)
				}
				for k, v := range e.RequestHeaders {
					switch strings.ToLower(k) {
					case ":method", "authorization", "content-length", "accept-encoding":
						continue
					}
					if v2, ok := tokens[v]; ok && strings.EqualFold(k, "If-Match") {
						v = v2
					}
					req.Header.Set(k, v)
				}
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				got, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				where := fmt.Sprintf("exchange %d (%s %s)", i, e.RequestMethod, u.Path)
				for _, k := range []string{"x-ms-continuation-NextPartitionKey", "x-ms-continuation-NextRowKey", "x-ms-continuation-NextTableName", "ETag"} {
					if v := e.ResponseHeaders[k]; v != "" {
						tokens[v] = resp.Header.Get(k)
					}
				}
				for _, d := range compareCosmos(e.StatusCode, e.ResponseHeaders, e.ResponseBody, resp, got) {
					t.Errorf("%s: %s", where, d)
				}
				if strings.HasPrefix(e.ResponseHeaders["Content-Type"], "multipart/") {
					recorded := bytes.ReplaceAll(replayBody(e.ResponseBody), []byte(origin), []byte(srv.URL()))
					want, have := batchParts(recorded), batchParts(got)
					ids := [2]string{e.ResponseHeaders["x-ms-request-id"], resp.Header.Get("x-ms-request-id")}
					for _, d := range compareParts(want, have, ids) {
						t.Errorf("%s: %s", where, d)
					}
					for j := range min(len(want), len(have)) {
						if w := want[j].header["etag"]; w != "" {
							tokens[w] = have[j].header["etag"]
						}
					}
				}
			}
		})
	}
	t.Logf("%d files, %d exchanges", len(files), exchanges)
}

// replayBody is a recorded request body as bytes: a JSON value as
// written, a string as its base64 content (batch bodies) or as is.
func replayBody(raw json.RawMessage) []byte {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	if raw[0] != '"' {
		return raw
	}
	var s string
	_ = json.Unmarshal(raw, &s)
	if b, err := base64.StdEncoding.DecodeString(s); err == nil {
		return b
	}
	return []byte(s)
}

// cosmosOnlyAbsent are headers Storage sends and the recorded Cosmos
// answers never carry.
var cosmosOnlyAbsent = []string{"Cache-Control", "Server", "x-ms-version", "X-Content-Type-Options", "DataServiceId", "x-ms-error-code"}

// compareCosmos lists how the server's answer differs from the recorded
// one.
func compareCosmos(status int, hdr map[string]string, body json.RawMessage, resp *http.Response, got []byte) []string {
	var diffs []string
	if resp.StatusCode != status {
		return []string{fmt.Sprintf("status %d, Cosmos %d: %.300s", resp.StatusCode, status, got)}
	}
	// Cosmos's Delete Table answered with Content-Type application/json
	// 5 times in 37, without it the others: not compared.
	deleteTable := resp.Request.Method == http.MethodDelete && strings.HasPrefix(resp.Request.URL.Path, "/Tables(")
	if want := hdr["Content-Type"]; want != "" && !deleteTable && !strings.HasPrefix(want, "multipart/") && resp.Header.Get("Content-Type") != want {
		diffs = append(diffs, fmt.Sprintf("Content-Type %q, Cosmos %q", resp.Header.Get("Content-Type"), want))
	}
	for _, k := range cosmosOnlyAbsent {
		if resp.Header.Get(k) != "" {
			diffs = append(diffs, "has "+k+", which Cosmos does not send")
		}
	}
	for _, k := range []string{"ETag", "Location", "Preference-Applied", "x-ms-continuation-NextPartitionKey", "x-ms-continuation-NextTableName"} {
		if (hdr[k] != "") != (resp.Header.Get(k) != "") {
			diffs = append(diffs, fmt.Sprintf("%s %q, Cosmos %q", k, resp.Header.Get(k), hdr[k]))
		}
	}
	var want, have struct {
		Error *struct{ Code string } `json:"odata.error"`
		Value []struct{ RowKey, TableName string }
	}
	if len(body) > 0 && body[0] == '{' && json.Unmarshal(body, &want) == nil && json.Unmarshal(got, &have) == nil {
		if want.Error != nil && (have.Error == nil || have.Error.Code != want.Error.Code) {
			diffs = append(diffs, fmt.Sprintf("error %.200s, Cosmos %s", got, want.Error.Code))
		}
		rows := func(v []struct{ RowKey, TableName string }) []string {
			var out []string
			for _, r := range v {
				out = append(out, r.RowKey+r.TableName)
			}
			return out
		}
		w, h := rows(want.Value), rows(have.Value)
		// Table lists came in neither name nor creation order: only their
		// lengths are compared.
		tables := len(want.Value) > 0 && want.Value[0].TableName != ""
		if tables && len(w) != len(h) || !tables && !slices.Equal(w, h) {
			diffs = append(diffs, fmt.Sprintf("results %q, Cosmos %q", h, w))
		}
	}
	return diffs
}

// batchPart is one part of a batch answer: its status line, its header
// names in order and values (the names in lower case), and its body.
type batchPart struct {
	status string
	names  []string
	header map[string]string
	body   string
}

// batchParts reads the parts of a batch answer: each starts with its
// status line, ends its headers at a blank line (CRLF or LF) and its
// body at the next delimiter line.
func batchParts(body []byte) []batchPart {
	var parts []batchPart
	var cur *batchPart
	inBody := false
	for line := range strings.Lines(string(body)) {
		line = strings.TrimRight(line, "\r\n")
		switch {
		case strings.HasPrefix(line, "HTTP/1.1 "):
			parts = append(parts, batchPart{status: line, header: map[string]string{}})
			cur, inBody = &parts[len(parts)-1], false
		case cur == nil:
		case strings.HasPrefix(line, "--"):
			cur = nil
		case inBody:
			cur.body += line
		case line == "":
			inBody = true
		default:
			if k, v, ok := strings.Cut(line, ":"); ok {
				cur.names = append(cur.names, k)
				cur.header[strings.ToLower(k)] = strings.TrimSpace(v)
			}
		}
	}
	return parts
}

// compareParts lists how a batch answer's parts differ from the
// recorded ones: their number and statuses; their header names, in
// order; each one's Content-ID, Content-Type, Location and
// Preference-Applied; a failed part's error code and message (each
// answer's request ID, ids, read as one); and whether their ETags (the
// Timestamps) are one for the batch or one each, increasing.
func compareParts(want, have []batchPart, ids [2]string) []string {
	if len(want) != len(have) {
		return []string{fmt.Sprintf("%d parts, Cosmos %d", len(have), len(want))}
	}
	var diffs []string
	var wantTags, haveTags []string
	for i := range want {
		w, h := want[i], have[i]
		if w.status != h.status {
			diffs = append(diffs, fmt.Sprintf("part %d: %q, Cosmos %q", i, h.status, w.status))
		}
		if !slices.Equal(w.names, h.names) {
			diffs = append(diffs, fmt.Sprintf("part %d: headers %q, Cosmos %q", i, h.names, w.names))
		}
		for _, k := range []string{"content-id", "content-type", "location", "preference-applied"} {
			if w.header[k] != h.header[k] {
				diffs = append(diffs, fmt.Sprintf("part %d: %s %q, Cosmos %q", i, k, h.header[k], w.header[k]))
			}
		}
		if wm, hm := partError(w.body, ids[0]), partError(h.body, ids[1]); wm != hm {
			diffs = append(diffs, fmt.Sprintf("part %d: error %q, Cosmos %q", i, hm, wm))
		}
		if (w.header["etag"] != "") != (h.header["etag"] != "") {
			diffs = append(diffs, fmt.Sprintf("part %d: ETag %q, Cosmos %q", i, h.header["etag"], w.header["etag"]))
		} else if w.header["etag"] != "" {
			wantTags, haveTags = append(wantTags, w.header["etag"]), append(haveTags, h.header["etag"])
		}
	}
	if want, have := versioning(wantTags), versioning(haveTags); want != have {
		diffs = append(diffs, fmt.Sprintf("the parts' ETags are %s, Cosmos's %s: %q", have, want, haveTags))
	}
	return diffs
}

// partError is a failed part's error body as code, lang and message,
// its request ID id read as "<id>"; the body itself when it is no JSON
// error.
func partError(body, id string) string {
	var e struct {
		Error *struct {
			Code    string
			Message struct{ Lang, Value string }
		} `json:"odata.error"`
	}
	if json.Unmarshal([]byte(body), &e) != nil || e.Error == nil {
		return body
	}
	msg := e.Error.Message.Value
	if id != "" {
		msg = strings.ReplaceAll(msg, id, "<id>")
	}
	return e.Error.Code + " " + e.Error.Message.Lang + " " + msg
}

// versioning says how a batch's ETags, in part order, relate: all one,
// each later than the one before (they hold fixed-width Timestamps), or
// neither.
func versioning(etags []string) string {
	if len(etags) < 2 {
		return "too few to tell"
	}
	distinct := len(slices.Compact(slices.Clone(etags))) // all equal: 1
	switch {
	case distinct == 1:
		return "one for the batch"
	case distinct == len(etags) && slices.IsSorted(etags):
		return "one each, increasing"
	}
	return "neither one nor increasing"
}
