package server

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/tablestore/tablestore/edm"
)

// tlsHandshakeTimeout bounds a TLS handshake on a NewTLSListener
// connection; a client slower than this is dropped.
const tlsHandshakeTimeout = 10 * time.Second

// NewTLSListener serves TLS with cfg on ln's connections, so that
// net/http's own refusals of HTTP/1.1 requests (headers over the wire
// limit, bytes that are not HTTP) carry Azure's error body there too, as
// NewListener gives them without TLS. Handshakes run off the accept
// path, each bounded by a timeout. A connection that negotiated HTTP/2
// is the *tls.Conn itself, served by net/http's HTTP/2 server; an
// HTTP/1.1 one is wrapped, and the server from NewHTTPSServer still
// hands its handler r.TLS. Start that server with
// Serve(NewTLSListener(ln, srv.TLSConfig)).
func NewTLSListener(ln net.Listener, cfg *tls.Config) net.Listener {
	l := &tlsListener{Listener: ln, cfg: cfg, conns: make(chan net.Conn), done: make(chan struct{})}
	go l.acceptLoop()
	return l
}

type tlsListener struct {
	net.Listener
	cfg   *tls.Config
	conns chan net.Conn // handshaken connections, for Accept
	done  chan struct{} // closed when the listener ends, with err set
	once  sync.Once
	err   error
}

// tlsHTTP1Conn is an HTTP/1.1 connection over TLS whose net/http error
// responses are rewritten; tls is the connection under the rewriting.
type tlsHTTP1Conn struct {
	azureErrorConn
	tls *tls.Conn
}

func (l *tlsListener) acceptLoop() {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				time.Sleep(5 * time.Millisecond)
				continue
			}
			l.end(err)
			return
		}
		go l.handshake(c)
	}
}

func (l *tlsListener) handshake(c net.Conn) {
	tc := tls.Server(c, l.cfg)
	ctx, cancel := context.WithTimeout(context.Background(), tlsHandshakeTimeout)
	err := tc.HandshakeContext(ctx)
	cancel()
	if err != nil {
		// Plain HTTP to the TLS port gets an answer it can read.
		var re tls.RecordHeaderError
		if errors.As(err, &re) && re.Conn != nil && looksLikeHTTP(re.RecordHeader) {
			_ = re.Conn.SetWriteDeadline(time.Now().Add(tlsHandshakeTimeout))
			_, _ = re.Conn.Write(wireError(errPlainHTTP))
		}
		_ = c.Close()
		return
	}
	var out net.Conn = tc
	if tc.ConnectionState().NegotiatedProtocol != "h2" {
		out = tlsHTTP1Conn{azureErrorConn{tc}, tc}
	}
	select {
	case l.conns <- out:
	case <-l.done:
		_ = c.Close()
	}
}

// Accept returns the next connection whose handshake has completed.
func (l *tlsListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, l.err
	}
}

// Close stops accepting; connections still in their handshake are closed.
func (l *tlsListener) Close() error {
	l.end(net.ErrClosed)
	return l.Listener.Close()
}

func (l *tlsListener) end(err error) {
	l.once.Do(func() {
		l.err = err
		close(l.done)
	})
}

// tlsConnKey is the context key under which an HTTP/1.1 request from a
// NewTLSListener connection finds its *tls.Conn.
type tlsConnKey struct{}

// tlsConnContext is http.Server.ConnContext for NewTLSListener.
func tlsConnContext(ctx context.Context, c net.Conn) context.Context {
	if tc, ok := c.(tlsHTTP1Conn); ok {
		return context.WithValue(ctx, tlsConnKey{}, tc.tls)
	}
	return ctx
}

// withTLSState gives the requests of wrapped TLS connections their
// r.TLS, which net/http sets only for a *tls.Conn.
func withTLSState(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.TLS == nil {
			if tc, ok := r.Context().Value(tlsConnKey{}).(*tls.Conn); ok {
				st := tc.ConnectionState()
				r = r.WithContext(r.Context())
				r.TLS = &st
			}
		}
		h.ServeHTTP(w, r)
	})
}

// errPlainHTTP answers an HTTP request sent without TLS to a TLS port.
var errPlainHTTP = apiError(http.StatusBadRequest, edm.CodeInvalidInput,
	"One of the request inputs is not valid: this endpoint takes HTTPS; the request came as plain HTTP.")

// looksLikeHTTP reports whether the first five bytes a client sent, read
// as a TLS record header, are the start of an HTTP request line.
func looksLikeHTTP(h [5]byte) bool {
	for _, m := range []string{"GET /", "HEAD ", "POST ", "PUT /", "PATCH", "DELET", "OPTIO", "MERGE", "CONNE"} {
		if string(h[:]) == m[:5] {
			return true
		}
	}
	return false
}
