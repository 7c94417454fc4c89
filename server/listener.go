package server

import (
	"bytes"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/tablestore/tablestore"
	"github.com/tablestore/tablestore/edm"
)

// NewListener wraps ln so that the requests net/http refuses before any
// handler runs are answered with Azure's JSON error body instead of Go's
// plain text: a request line and headers over the server's
// MaxHeaderBytes (431 RequestHeaderFieldsTooLarge) and a request that is
// not well-formed HTTP (400 InvalidInput). Everything else passes
// unchanged. Serve an http.Server from NewHTTPServer with it:
//
//	ln, err := net.Listen("tcp", addr)
//	err = srv.Serve(server.NewListener(ln))
func NewListener(ln net.Listener) net.Listener { return azureErrorListener{ln} }

type azureErrorListener struct{ net.Listener }

func (l azureErrorListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return azureErrorConn{c}, nil
}

// azureErrorConn rewrites net/http's own error responses, which it
// writes to the connection in one Write with exactly these bytes.
type azureErrorConn struct{ net.Conn }

// goErrorHeaders is how net/http's own error responses go on after their
// status line.
const goErrorHeaders = "\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n"

var goErrors = []struct {
	wire []byte
	err  *apiErr
}{
	{[]byte("HTTP/1.1 431 Request Header Fields Too Large" + goErrorHeaders + "431 Request Header Fields Too Large"), errHeadersTooLarge},
	{[]byte("HTTP/1.1 400 Bad Request" + goErrorHeaders + "400 Bad Request"), apiError(http.StatusBadRequest, edm.CodeInvalidInput,
		"One of the request inputs is not valid: the request is not well-formed HTTP.")},
}

func (c azureErrorConn) Write(b []byte) (int, error) {
	for _, e := range goErrors {
		if bytes.Equal(b, e.wire) {
			if _, err := c.Conn.Write(wireError(e.err)); err != nil {
				return 0, err
			}
			return len(b), nil
		}
	}
	return c.Conn.Write(b)
}

// wireError is a whole HTTP/1.1 response carrying err as Azure's JSON
// error, for a connection about to close.
func wireError(err *apiErr) []byte {
	id := newRequestID()
	body := errorJSON(err.code, err.msg+"\nRequestId:"+id+"\nTime:"+edm.FormatDateTimeJSON(time.Now()))
	var b bytes.Buffer
	b.WriteString("HTTP/1.1 " + strconv.Itoa(err.status) + " " + http.StatusText(err.status) + "\r\n")
	b.WriteString("Content-Type: " + contentType(tablestore.MinimalMetadata) + "\r\n")
	b.WriteString("Content-Length: " + strconv.Itoa(len(body)) + "\r\n")
	b.WriteString("x-ms-error-code: " + string(err.code) + "\r\n")
	b.WriteString("x-ms-request-id: " + id + "\r\n")
	b.WriteString("x-ms-version: 2019-02-02\r\n")
	b.WriteString("Date: " + time.Now().UTC().Format(http.TimeFormat) + "\r\n")
	b.WriteString("Connection: close\r\n\r\n")
	b.Write(body)
	return b.Bytes()
}
