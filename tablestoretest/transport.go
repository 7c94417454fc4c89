package tablestoretest

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
)

// ErrDropped is what InProcessClient's RoundTrip returns (wrapped) for a
// request whose connection a fault dropped (Fault.Drop).
var ErrDropped = errors.New("tablestoretest: connection dropped")

// InProcessClient returns an *http.Client whose Transport calls the
// server's handler in the test's process, without a socket: the request
// is authenticated, routed and answered exactly as over TCP (same status,
// headers and body bytes), faults included. Its Transport suits azcore's
// ClientOptions.Transport (aztables.ClientOptions{ClientOptions:
// policy.ClientOptions{Transport: srv.InProcessClient()}}) with the
// server's ConnectionString. The request's context ends the exchange
// early: RoundTrip then returns the context's error.
func (s *Server) InProcessClient() *http.Client {
	return &http.Client{Transport: &inProcess{h: s.Handler()}}
}

// inProcess is InProcessClient's RoundTripper.
type inProcess struct {
	h http.Handler
}

// RoundTrip reads the request body whole, serves the request in a
// goroutine and returns its response, or the context's error.
func (t *inProcess) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	var body []byte
	if req.Body != nil && req.Body != http.NoBody {
		var err error
		body, err = io.ReadAll(req.Body)
		_ = req.Body.Close()
		if err != nil {
			return nil, fmt.Errorf("tablestoretest: read request body: %w", err)
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	sr := req.Clone(ctx)
	sr.Proto, sr.ProtoMajor, sr.ProtoMinor = "HTTP/1.1", 1, 1
	sr.RequestURI = req.URL.RequestURI()
	sr.Host = req.Host
	if sr.Host == "" {
		sr.Host = req.URL.Host
	}
	sr.URL.Scheme, sr.URL.Host = "", ""
	sr.RemoteAddr = "127.0.0.1:1"
	sr.Header = canonical(req.Header) // as net/http's server reads them
	sr.ContentLength = int64(len(body))
	sr.Body = http.NoBody
	// As net/http's client sends it and its server reads it.
	if sr.Header.Get("User-Agent") == "" {
		sr.Header.Set("User-Agent", "Go-http-client/1.1")
	}
	sr.Header.Del("Content-Length")
	if len(body) > 0 || req.Method == http.MethodPost || req.Method == http.MethodPut || req.Method == http.MethodPatch {
		sr.Header.Set("Content-Length", strconv.Itoa(len(body)))
		sr.Body = io.NopCloser(bytes.NewReader(body))
	}
	w := &bufferedResponse{header: http.Header{}}
	done := make(chan error, 1)
	go func() {
		defer func() {
			if p := recover(); p != nil {
				if p == http.ErrAbortHandler {
					done <- ErrDropped
					return
				}
				done <- fmt.Errorf("tablestoretest: handler panicked: %v", p)
			}
		}()
		t.h.ServeHTTP(w, sr)
		done <- nil
	}()
	select {
	case err := <-done:
		if err != nil {
			return nil, fmt.Errorf("%s %s: %w", req.Method, req.URL, err)
		}
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return w.response(req), nil
}

// bufferedResponse collects a handler's response.
type bufferedResponse struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (b *bufferedResponse) Header() http.Header { return b.header }

func (b *bufferedResponse) WriteHeader(code int) {
	if b.status == 0 {
		b.status = code
	}
}

func (b *bufferedResponse) Write(p []byte) (int, error) {
	if b.status == 0 {
		b.status = http.StatusOK
	}
	return b.body.Write(p)
}

// response is the http.Response a client over TCP would read: net/http's
// server adds Content-Length for a body written whole, a sniffed
// Content-Type, and no body for HEAD, 204 or 304.
func (b *bufferedResponse) response(req *http.Request) *http.Response {
	if b.status == 0 {
		b.status = http.StatusOK
	}
	hd := canonical(b.header) // as net/http's client reads them
	body := b.body.Bytes()
	noBody := req.Method == http.MethodHead || b.status == http.StatusNoContent || b.status == http.StatusNotModified
	if noBody {
		body = nil
	} else {
		if hd.Get("Content-Type") == "" && len(body) > 0 {
			hd.Set("Content-Type", http.DetectContentType(body))
		}
		hd.Set("Content-Length", strconv.Itoa(len(body)))
	}
	length := int64(len(body))
	if req.Method == http.MethodHead {
		length = -1
		if cl, err := strconv.ParseInt(hd.Get("Content-Length"), 10, 64); err == nil {
			length = cl
		}
	}
	return &http.Response{
		Status:        strconv.Itoa(b.status) + " " + http.StatusText(b.status),
		StatusCode:    b.status,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        hd,
		Body:          io.NopCloser(bytes.NewReader(body)),
		ContentLength: length,
		Request:       req,
		Close:         hd.Get("Connection") == "close",
	}
}

// canonical copies h with its keys in canonical form, as headers read
// from the wire are.
func canonical(h http.Header) http.Header {
	out := make(http.Header, len(h))
	for k, vs := range h {
		ck := http.CanonicalHeaderKey(k)
		out[ck] = append(out[ck], vs...)
	}
	return out
}
