package azure

import (
	"net/http"
	"strings"
	"testing"

	ts "github.com/tablestore/tablestore"
	"github.com/tablestore/tablestore/edm"
)

// crlf turns a readable response into the wire form.
func crlf(s string) []byte { return []byte(strings.ReplaceAll(s, "\n", "\r\n")) }

const okBatch = `--batchresponse_1
Content-Type: multipart/mixed; boundary=changesetresponse_2

--changesetresponse_2
Content-Type: application/http
Content-Transfer-Encoding: binary

HTTP/1.1 204 No Content
ETag: W/"datetime'2021-09-08T18%3A58%3A49.7704959Z'"


--changesetresponse_2
Content-Type: application/http
Content-Transfer-Encoding: binary

HTTP/1.1 204 No Content


--changesetresponse_2--
--batchresponse_1--
`

const failedBatch = `--batchresponse_1
Content-Type: multipart/mixed; boundary=changesetresponse_2

--changesetresponse_2
Content-Type: application/http
Content-Transfer-Encoding: binary

HTTP/1.1 409 Conflict
Content-Type: application/json;odata=minimalmetadata;streaming=true;charset=utf-8

{"odata.error":{"code":"EntityAlreadyExists","message":{"lang":"en-US","value":"2:The specified entity already exists.\nRequestId:x\nTime:y"}}}
--changesetresponse_2--
--batchresponse_1--
`

func TestParseBatchResponse(t *testing.T) {
	out, err := parseBatchResponse("multipart/mixed; boundary=batchresponse_1", crlf(okBatch))
	if err != nil || out.Err != nil || len(out.ETags) != 2 || out.ETags[1] != "" ||
		out.ETags[0] != `W/"datetime'2021-09-08T18%3A58%3A49.7704959Z'"` {
		t.Fatalf("success: %+v, %v", out, err)
	}
	// Without a Content-Type the boundary comes from the first line.
	out, err = parseBatchResponse("", crlf(failedBatch))
	if err != nil || out.Err == nil {
		t.Fatalf("failure: %+v, %v", out, err)
	}
	if out.Err.Code != "EntityAlreadyExists" || out.Err.Index != 2 ||
		out.Err.Message != "azure answered 409: the specified entity already exists" {
		t.Fatalf("failure: %+v", out.Err)
	}
	for _, bad := range []string{"", "{}", "--\r\n", "--b\r\n--b--", "--batchresponse_1\r\nContent-Type: multipart/mixed\r\n\r\nx"} {
		if _, err := parseBatchResponse("", []byte(bad)); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

func FuzzParseBatchResponse(f *testing.F) {
	f.Add("", crlf(okBatch))
	f.Add("multipart/mixed; boundary=batchresponse_1", crlf(failedBatch))
	f.Add("", []byte("--x\r\n\r\n--x--"))
	f.Fuzz(func(t *testing.T, contentType string, body []byte) {
		out, err := parseBatchResponse(contentType, body)
		if err == nil && out.Err != nil && (out.Err.Index < 0 || out.Err.Index >= maxBatchParts) {
			t.Fatalf("index %d", out.Err.Index)
		}
	})
}

func TestLibraryCode(t *testing.T) {
	for _, c := range []struct {
		azure  string
		status int
		op     opKind
		want   ts.Code
	}{
		{"EntityAlreadyExists", 409, opEntity, edm.CodeEntityAlreadyExists},
		{"EntityNotFound", 404, opEntity, edm.CodeResourceNotFound},
		{"TableNotFound", 404, opEntity, edm.CodeTableNotFound},
		{"TableNotFound", 404, opDeleteTable, edm.CodeResourceNotFound},
		{"TableBeingDeleted", 409, opCreateTable, edm.CodeTableBeingDeleted},
		{"", 409, opCreateTable, edm.CodeTableAlreadyExists},
		{"", 409, opEntity, edm.CodeEntityAlreadyExists},
		{"", 404, opEntity, edm.CodeResourceNotFound},
		{"", 412, opEntity, edm.CodeUpdateConditionNotSatisfied},
		{"", 413, opEntity, edm.CodeRequestBodyTooLarge},
		{"", 400, opEntity, edm.CodeInvalidInput},
		{"", 501, opEntity, edm.CodeNotImplemented},
		{"", 500, opEntity, "InternalError"},
		{"", 418, opEntity, "HTTP418"},
		{"AuthenticationFailed", 403, opEntity, "AuthenticationFailed"},
		{"InvalidOperation", 400, opEntity, edm.CodeInvalidInput},
	} {
		if got := libraryCode(c.azure, c.status, c.op); got != c.want {
			t.Errorf("%q %d op %d: %s, want %s", c.azure, c.status, c.op, got, c.want)
		}
	}
}

func TestOdataError(t *testing.T) {
	code, msg := odataError([]byte(`{"odata.error":{"code":"X","message":{"lang":"en-US","value":"0:Bad.\nRequestId:1"}}}`))
	if code != "X" || msg != "0:Bad.\nRequestId:1" {
		t.Fatalf("%q %q", code, msg)
	}
	if got := describe(msg, http.StatusBadRequest); got != "azure answered 400: 0:Bad" {
		t.Fatalf("describe: %q", got)
	}
	if i, rest, ok := indexPrefix("17:x:y"); !ok || i != 17 || rest != "x:y" {
		t.Fatalf("indexPrefix: %d %q %v", i, rest, ok)
	}
	for _, s := range []string{"x:y", ":y", "1000:y", "-1:y", "no colon"} {
		if _, _, ok := indexPrefix(s); ok {
			t.Errorf("indexPrefix(%q) ok", s)
		}
	}
}

func TestPosition(t *testing.T) {
	for _, v := range []string{"", "1!8!U21pdGg-", "a/b+c==", "~x", "日本", "q?#\\", "\x01"} {
		enc := encodePosition(v)
		if strings.ContainsAny(enc, "/\\#?") || (enc != v) == plainPosition(v) {
			t.Errorf("%q encodes as %q", v, enc)
		}
		if dec, err := decodePosition(enc); err != nil || dec != v {
			t.Errorf("%q: %q, %v", v, dec, err)
		}
	}
	if _, err := decodePosition("~!!"); err == nil {
		t.Error("malformed escape decoded")
	}
}

func FuzzPosition(f *testing.F) {
	f.Add("1!8!U21pdGg-")
	f.Add("~")
	f.Fuzz(func(t *testing.T, v string) {
		if dec, err := decodePosition(encodePosition(v)); err != nil || dec != v {
			t.Fatalf("%q: %q, %v", v, dec, err)
		}
		decodePosition(v) // never panics
	})
}

func TestTimeOfETag(t *testing.T) {
	tm, ok := timeOfETag(`W/"datetime'2021-08-31T15%3A41%3A38.3027816Z'"`)
	if !ok || tm.Format("2006-01-02T15:04:05.0000000Z") != "2021-08-31T15:41:38.3027816Z" {
		t.Fatalf("%v %v", tm, ok)
	}
	for _, bad := range []string{"", `W/"0x8D"`, `W/"datetime'x'"`} {
		if _, ok := timeOfETag(bad); ok {
			t.Errorf("%q parsed", bad)
		}
	}
}
