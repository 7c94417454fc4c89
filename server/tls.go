package server

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net/http"
	"os"
	"sync"
	"time"
)

// certReloadInterval is how often a TLS listener looks at its certificate
// files for a renewed pair.
const certReloadInterval = time.Minute

// TLSConfig returns a server TLS configuration (TLS 1.2 or later, with
// ECDHE and AEAD suites only over TLS 1.2; HTTP/2 and HTTP/1.1) serving the PEM certificate chain in certFile with the
// PEM private key in keyFile. The files are read now, so a bad pair is
// an error here rather than at the first handshake, and read again when
// their modification times change (looked at most once a minute, during
// a handshake), so a renewed certificate is picked up without a restart;
// a renewed pair that does not load is logged nowhere and the previous
// one stays in use. Errors: a file that cannot be read, or a pair that
// does not parse or match.
func TLSConfig(certFile, keyFile string) (*tls.Config, error) {
	if certFile == "" || keyFile == "" {
		return nil, errors.New("tablestore: server: TLS needs both a certificate file and a key file")
	}
	r := &certReloader{certFile: certFile, keyFile: keyFile}
	if err := r.load(); err != nil {
		return nil, err
	}
	return &tls.Config{
		MinVersion:     tls.VersionTLS12,
		CipherSuites:   tls12Suites,
		NextProtos:     []string{"h2", "http/1.1"},
		GetCertificate: r.get,
	}, nil
}

// tls12Suites are the suites offered over TLS 1.2: ECDHE key exchange
// (forward secrecy) with AEAD ciphers only, no CBC or SHA-1. TLS 1.3
// has its own suites, all AEAD.
var tls12Suites = []uint16{
	tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,
	tls.TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,
	tls.TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256,
	tls.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,
	tls.TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384,
	tls.TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256,
}

// NewHTTPSServer is NewHTTPServer over TLS with the certificate and key
// in certFile and keyFile (PEM; see TLSConfig). Start it with
// Serve(NewTLSListener(listener, srv.TLSConfig)), which gives every
// refusal Azure's error body, or ServeTLS(listener, "", ""), which leaves
// net/http's plain text on requests beyond the wire limit; stop it with
// Shutdown. Requests it serves reach the handler with r.TLS set, which
// bearer tokens require and which makes the service root https.
func NewHTTPSServer(addr string, h http.Handler, certFile, keyFile string) (*http.Server, error) {
	cfg, err := TLSConfig(certFile, keyFile)
	if err != nil {
		return nil, err
	}
	srv := NewHTTPServer(addr, withTLSState(h))
	srv.TLSConfig = cfg
	srv.ConnContext = tlsConnContext
	return srv, nil
}

// certReloader holds the current certificate and reloads it when its
// files change.
type certReloader struct {
	certFile, keyFile string

	mu        sync.Mutex
	cert      *tls.Certificate
	certMod   time.Time
	keyMod    time.Time
	lastCheck time.Time
}

func (r *certReloader) load() error {
	ci, err := os.Stat(r.certFile)
	if err != nil {
		return fmt.Errorf("tablestore: server: TLS certificate: %w", err)
	}
	ki, err := os.Stat(r.keyFile)
	if err != nil {
		return fmt.Errorf("tablestore: server: TLS key: %w", err)
	}
	cert, err := tls.LoadX509KeyPair(r.certFile, r.keyFile)
	if err != nil {
		return fmt.Errorf("tablestore: server: TLS certificate %s and key %s: %w", r.certFile, r.keyFile, err)
	}
	r.cert, r.certMod, r.keyMod, r.lastCheck = &cert, ci.ModTime(), ki.ModTime(), time.Now()
	return nil
}

// get is tls.Config.GetCertificate.
func (r *certReloader) get(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if time.Since(r.lastCheck) >= certReloadInterval {
		r.lastCheck = time.Now()
		ci, err1 := os.Stat(r.certFile)
		ki, err2 := os.Stat(r.keyFile)
		if err1 == nil && err2 == nil && (!ci.ModTime().Equal(r.certMod) || !ki.ModTime().Equal(r.keyMod)) {
			cert, cm, km := r.cert, r.certMod, r.keyMod
			if err := r.load(); err != nil {
				r.cert, r.certMod, r.keyMod = cert, cm, km
			}
		}
	}
	return r.cert, nil
}
