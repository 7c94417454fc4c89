package main

import (
	"bufio"
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"hash"
	"io"
	"net"
	"net/http"
	"strconv"
	"syscall"
	"time"
)

// restConn is one keep-alive HTTP/1.1 connection to a Table service,
// written by hand so the load generator costs the server's machine as
// little as it can: requests are formatted into one reused buffer,
// signed with SharedKeyLite (an HMAC-SHA256 of the date and the
// canonical resource, computed per request with a reused hash), and
// responses are read with net/http's parser into a reused body buffer.
// A restConn is used by one goroutine at a time.
type restConn struct {
	host    string // host:port
	account string
	key     []byte
	c       io.ReadWriteCloser
	br      *bufio.Reader
	mac     hash.Hash
	req     []byte       // the request being written
	sig     []byte       // scratch for the signature
	body    bytes.Buffer // the last response's body
}

// newRestConn dials host for account, whose key is key64 (base64).
func newRestConn(host, account, key64 string) (*restConn, error) {
	key, err := base64.StdEncoding.DecodeString(key64)
	if err != nil {
		return nil, fmt.Errorf("account key: %w", err)
	}
	c := &restConn{host: host, account: account, key: key, mac: hmac.New(sha256.New, key)}
	return c, c.dial()
}

func (c *restConn) dial() error {
	if c.c != nil {
		c.c.Close()
	}
	conn, err := dialBlocking(c.host)
	if err != nil {
		return err
	}
	c.c, c.br = conn, bufio.NewReaderSize(conn, 64<<10)
	return nil
}

// blockingConn is a TCP socket in blocking mode, read and written with
// plain system calls: a request costs one write and (most often) one
// read, where Go's network poller would add a failed read, a poll and
// a wake-up per request.
type blockingConn struct{ fd int }

// dialBlocking connects to host (no delay on small writes) and returns
// the socket in blocking mode.
func dialBlocking(host string) (*blockingConn, error) {
	conn, err := net.DialTimeout("tcp", host, 10*time.Second)
	if err != nil {
		return nil, err
	}
	tc := conn.(*net.TCPConn)
	tc.SetNoDelay(true)
	f, err := tc.File() // a duplicate of the socket
	tc.Close()
	if err != nil {
		return nil, err
	}
	fd, err := syscall.Dup(int(f.Fd()))
	f.Close()
	if err != nil {
		return nil, err
	}
	if err := syscall.SetNonblock(fd, false); err != nil {
		syscall.Close(fd)
		return nil, err
	}
	return &blockingConn{fd: fd}, nil
}

func (b *blockingConn) Read(p []byte) (int, error) {
	for {
		n, err := syscall.Read(b.fd, p)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return 0, err
		}
		if n == 0 && len(p) > 0 {
			return 0, io.EOF
		}
		return n, nil
	}
}

func (b *blockingConn) Write(p []byte) (int, error) {
	done := 0
	for done < len(p) {
		n, err := syscall.Write(b.fd, p[done:])
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return done, err
		}
		done += n
	}
	return done, nil
}

func (b *blockingConn) Close() error { return syscall.Close(b.fd) }

func (c *restConn) close() {
	if c.c != nil {
		c.c.Close()
	}
}

// restResponse is a response: its status, headers and body (valid until
// the connection's next request).
type restResponse struct {
	status int
	header http.Header
	body   []byte
}

// Accept values of the three JSON metadata levels.
const (
	acceptNoMeta   = "application/json;odata=nometadata"
	acceptMinMeta  = "application/json;odata=minimalmetadata"
	acceptFullMeta = "application/json;odata=fullmetadata"
)

// do sends one request. path is the escaped path after the account
// (/Tables, /t(PartitionKey='p',RowKey='r')), query the raw query string
// without '?'; headers are extra "Name: value" lines. The request is
// signed with SharedKeyLite over "/account/account" + path (path-style
// addressing: the account is the path's first segment).
func (c *restConn) do(method, path, query, accept string, headers []string, contentType string, body []byte) (restResponse, error) {
	full := "/" + c.account + path
	date := time.Now().UTC().Format(http.TimeFormat)
	c.mac.Reset()
	c.mac.Write([]byte(date))
	c.mac.Write([]byte("\n/"))
	c.mac.Write([]byte(c.account))
	c.mac.Write([]byte(full))
	c.sig = base64.StdEncoding.AppendEncode(c.sig[:0], c.mac.Sum(nil))

	b := c.req[:0]
	b = append(b, method...)
	b = append(b, ' ')
	b = append(b, full...)
	if query != "" {
		b = append(b, '?')
		b = append(b, query...)
	}
	b = append(b, " HTTP/1.1\r\nHost: "...)
	b = append(b, c.host...)
	b = append(b, "\r\nx-ms-date: "...)
	b = append(b, date...)
	b = append(b, "\r\nx-ms-version: 2019-02-02\r\nDataServiceVersion: 3.0\r\nMaxDataServiceVersion: 3.0;NetFx\r\nAccept: "...)
	b = append(b, accept...)
	b = append(b, "\r\nAuthorization: SharedKeyLite "...)
	b = append(b, c.account...)
	b = append(b, ':')
	b = append(b, c.sig...)
	b = append(b, "\r\n"...)
	for _, h := range headers {
		b = append(b, h...)
		b = append(b, "\r\n"...)
	}
	if body != nil {
		b = append(b, "Content-Type: "...)
		b = append(b, contentType...)
		b = append(b, "\r\nContent-Length: "...)
		b = strconv.AppendInt(b, int64(len(body)), 10)
		b = append(b, "\r\n"...)
	}
	b = append(b, "\r\n"...)
	c.req = b
	r, err := c.roundTrip(body)
	if err != nil {
		// One retry on a fresh connection: the server may have closed
		// an idle one.
		if derr := c.dial(); derr != nil {
			return r, err
		}
		r, err = c.roundTrip(body)
	}
	return r, err
}

func (c *restConn) roundTrip(body []byte) (restResponse, error) {
	var r restResponse
	if c.c == nil {
		if err := c.dial(); err != nil {
			return r, err
		}
	}
	if len(body) > 0 && len(body) < 8<<10 {
		c.req = append(c.req, body...)
		body = nil
	}
	if _, err := c.c.Write(c.req); err != nil {
		return r, err
	}
	if len(body) > 0 {
		if _, err := c.c.Write(body); err != nil {
			return r, err
		}
	}
	resp, err := http.ReadResponse(c.br, nil)
	if err != nil {
		return r, err
	}
	c.body.Reset()
	_, err = c.body.ReadFrom(resp.Body)
	resp.Body.Close()
	if err != nil {
		return r, err
	}
	if resp.Close {
		c.c.Close()
		c.c = nil
	}
	r.status, r.header, r.body = resp.StatusCode, resp.Header, c.body.Bytes()
	return r, nil
}

// entityPath returns the escaped path of one entity of table.
func entityPath(table, pk, rk string) string {
	return "/" + table + "(PartitionKey='" + odataKey(pk) + "',RowKey='" + odataKey(rk) + "')"
}

// odataKey doubles single quotes, as an OData key literal needs; the
// data set's keys need nothing else.
func odataKey(s string) string {
	return string(bytes.ReplaceAll([]byte(s), []byte("'"), []byte("''")))
}

// batchBody returns a $batch body inserting the JSON entities of ents
// into table, one changeset, in the form the Azure SDKs send, and its
// Content-Type.
func batchBody(endpoint, table string, ents [][]byte, id int) (body []byte, contentType string) {
	batch := fmt.Sprintf("batch_%08d", id)
	cs := fmt.Sprintf("changeset_%08d", id)
	var b bytes.Buffer
	fmt.Fprintf(&b, "--%s\r\nContent-Type: multipart/mixed; boundary=%s\r\n\r\n", batch, cs)
	for _, e := range ents {
		fmt.Fprintf(&b, "--%s\r\nContent-Transfer-Encoding: binary\r\nContent-Type: application/http\r\n\r\n", cs)
		fmt.Fprintf(&b, "POST %s/%s HTTP/1.1\r\nAccept: %s\r\nContent-Type: application/json\r\nPrefer: return-no-content\r\nDataServiceVersion: 3.0\r\n\r\n",
			endpoint, table, acceptMinMeta)
		b.Write(e)
		b.WriteString("\r\n")
	}
	fmt.Fprintf(&b, "--%s--\r\n\r\n--%s--\r\n", cs, batch)
	return b.Bytes(), "multipart/mixed; boundary=" + batch
}

// batchStatuses counts the sub-responses of a $batch response body by
// status class: ok (2xx) and failed (anything else).
func batchStatuses(body []byte) (ok, failed int) {
	for rest := body; ; {
		i := bytes.Index(rest, []byte("HTTP/1.1 "))
		if i < 0 {
			return ok, failed
		}
		rest = rest[i+len("HTTP/1.1 "):]
		if len(rest) > 0 && rest[0] == '2' {
			ok++
		} else {
			failed++
		}
	}
}
