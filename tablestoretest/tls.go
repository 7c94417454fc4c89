package tablestoretest

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/tablestore/tablestore/server"
)

// TLSFiles is a throwaway certificate authority and a server certificate
// it signed for 127.0.0.1, ::1 and localhost, written as PEM files, so a
// test can serve TLS and give its clients the CA the way each takes it
// (a cert pool, a CA file, NODE_EXTRA_CA_CERTS).
type TLSFiles struct {
	CAFile   string // the CA certificate, PEM
	CertFile string // the server certificate, PEM
	KeyFile  string // the server's private key, PEM (PKCS #8)
	CAPEM    []byte // CAFile's contents
	// Pool holds the CA alone, for tls.Config.RootCAs.
	Pool *x509.CertPool
}

// NewTLSFiles makes a CA and a server certificate valid for a day and
// writes them into dir (created if needed) as ca.pem, cert.pem and
// key.pem. It fails t on any error.
func NewTLSFiles(t testing.TB, dir string) *TLSFiles {
	t.Helper()
	f, err := writeTLSFiles(dir)
	if err != nil {
		t.Fatalf("tablestoretest: TLS files: %v", err)
	}
	return f
}

func writeTLSFiles(dir string) (*TLSFiles, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	now := time.Now()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	caTmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "tablestoretest CA"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(24 * time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, err
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		return nil, err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	leafTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2),
		Subject:      pkix.Name{CommonName: "127.0.0.1"},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames:     []string{"localhost"},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
	}
	leafDER, err := x509.CreateCertificate(rand.Reader, leafTmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		return nil, err
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, err
	}
	f := &TLSFiles{
		CAFile:   filepath.Join(dir, "ca.pem"),
		CertFile: filepath.Join(dir, "cert.pem"),
		KeyFile:  filepath.Join(dir, "key.pem"),
		CAPEM:    pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}),
		Pool:     x509.NewCertPool(),
	}
	f.Pool.AddCert(ca)
	if err := errors.Join(
		os.WriteFile(f.CAFile, f.CAPEM, 0o600),
		os.WriteFile(f.CertFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: leafDER}), 0o600),
		os.WriteFile(f.KeyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}), 0o600),
	); err != nil {
		return nil, err
	}
	return f, nil
}

// NewTLSServerWithOptions is NewServerWithOptions over https, with a
// fresh CA and certificate (see TLSFiles) served through
// server.NewHTTPSServer. Clients must trust s.TLS().Pool; HTTPClient
// returns one that does.
func NewTLSServerWithOptions(t testing.TB, opts *server.Options) *Server {
	t.Helper()
	files := NewTLSFiles(t, t.TempDir())
	s := newServer(t, opts)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		s.closeWorld()
		t.Fatalf("tablestoretest: listen: %v", err)
	}
	hs, err := server.NewHTTPSServer(ln.Addr().String(), s.Handler(), files.CertFile, files.KeyFile)
	if err != nil {
		_ = ln.Close()
		s.closeWorld()
		t.Fatalf("tablestoretest: %v", err)
	}
	done := make(chan error, 1)
	go func() { done <- hs.Serve(server.NewTLSListener(ln, hs.TLSConfig)) }()
	url := "https://" + ln.Addr().String()
	s.listen, s.tls = func() string { return url }, files
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = hs.Shutdown(ctx)
		if err := <-done; !errors.Is(err, http.ErrServerClosed) {
			t.Errorf("tablestoretest: serve: %v", err)
		}
		s.closeWorld()
	})
	return s
}

// TLS returns the CA and certificate files of a server made by
// NewTLSServerWithOptions; nil for a plain-http server.
func (s *Server) TLS() *TLSFiles { return s.tls }

// HTTPClient returns an *http.Client that trusts the server's CA (for a
// TLS server) and gives up on a request after 30 seconds. It suits
// azcore's ClientOptions.Transport.
func (s *Server) HTTPClient() *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	if s.tls != nil {
		tr.TLSClientConfig = &tls.Config{RootCAs: s.tls.Pool, MinVersion: tls.VersionTLS12}
	}
	return &http.Client{Transport: tr, Timeout: 30 * time.Second}
}
