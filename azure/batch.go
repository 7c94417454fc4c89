package azure

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"strconv"
	"strings"

	"github.com/tablestore/tablestore/driver"
)

// An entity group transaction answers 202 Accepted whether it committed
// or not: the multipart body holds one part per action on success, or a
// single part with the failing action's status and an error whose message
// starts with its 0-based index and a colon ("2:The specified entity
// already exists."). aztables v1.4.1 turns a failure into an
// *azcore.ResponseError of the outer 202 response with no error code, so
// the driver reads the body itself.

// batchOutcome is what a $batch response body says.
type batchOutcome struct {
	// ETags of the successful parts, in order ("" for a delete).
	ETags []string
	// Err is the failing action's error, with its index, or nil.
	Err *driver.Error
}

// maxBatchParts bounds the parts read from one response: an action may
// have one part, and a transaction has at most 100 actions.
const maxBatchParts = 128

// parseBatchResponse reads a $batch response body; contentType is the
// response's Content-Type header ("" to take the boundary from the first
// line, as aztables does). Errors describe a body that is not a batch
// response; they never panic, whatever the input.
func parseBatchResponse(contentType string, body []byte) (*batchOutcome, error) {
	outer, err := boundary(contentType, body)
	if err != nil {
		return nil, err
	}
	mr := multipart.NewReader(bytes.NewReader(body), outer)
	part, err := mr.NextPart()
	if err != nil {
		return nil, fmt.Errorf("batch response: %w", err)
	}
	changeset, err := io.ReadAll(part)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) {
		return nil, fmt.Errorf("batch response: %w", err)
	}
	inner, err := boundary(part.Header.Get("Content-Type"), changeset)
	if err != nil {
		return nil, err
	}
	out := &batchOutcome{}
	ir := multipart.NewReader(bytes.NewReader(changeset), inner)
	for i := 0; ; i++ {
		p, err := ir.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("batch response part %d: %w", i, err)
		}
		if i >= maxBatchParts {
			return nil, errors.New("batch response: too many parts")
		}
		raw, err := io.ReadAll(p)
		if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, fmt.Errorf("batch response part %d: %w", i, err)
		}
		resp, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(raw)), nil)
		if err != nil {
			return nil, fmt.Errorf("batch response part %d: %w", i, err)
		}
		partBody, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		resp.Body.Close()
		if resp.StatusCode >= 400 {
			out.Err = batchError(resp.StatusCode, resp.Header.Get("x-ms-error-code"), partBody, i)
			return out, nil
		}
		out.ETags = append(out.ETags, resp.Header.Get("ETag"))
	}
	return out, nil
}

// boundary returns the multipart boundary of contentType, or when that
// has none, the one the body's first line opens ("--boundary").
func boundary(contentType string, body []byte) (string, error) {
	if _, params, err := mime.ParseMediaType(contentType); err == nil && params["boundary"] != "" {
		return params["boundary"], nil
	}
	line, _, _ := bytes.Cut(body, []byte("\n"))
	line = bytes.TrimSuffix(line, []byte("\r"))
	b, ok := bytes.CutPrefix(line, []byte("--"))
	if !ok || len(b) == 0 || len(b) > 200 {
		return "", errors.New("batch response: no multipart boundary")
	}
	return string(b), nil
}

// batchError builds the failing action's error from its part: the code
// from the header or the body, the index from the message's "N:" prefix
// (the part's position when the prefix is missing).
func batchError(status int, headerCode string, body []byte, part int) *driver.Error {
	code, msg := odataError(body)
	if headerCode != "" {
		code = headerCode
	}
	index := part
	if i, rest, ok := indexPrefix(msg); ok {
		index, msg = i, rest
	}
	return &driver.Error{Code: libraryCode(code, status, opEntity), Index: index, Message: describe(msg, status)}
}

// indexPrefix splits Azure's "N:message" into the action index and the
// message; ok is false when msg has no such prefix.
func indexPrefix(msg string) (int, string, bool) {
	n, rest, ok := strings.Cut(msg, ":")
	if !ok || n == "" || len(n) > 3 {
		return 0, msg, false
	}
	i, err := strconv.Atoi(n)
	if err != nil || i < 0 || i >= maxBatchParts {
		return 0, msg, false
	}
	return i, rest, true
}
