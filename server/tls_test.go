package server

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// writeTestCert writes a self-signed certificate for 127.0.0.1 and
// names, with key, into a temporary directory, and returns the files.
func writeTestCert(t *testing.T, key crypto.Signer, names ...string) (certFile, keyFile string) {
	t.Helper()
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "tablestore test"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
		DNSNames:     names,
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		t.Fatal(err)
	}
	pk, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: pk}), 0o600); err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile
}

// TestTLSSuites: over TLS 1.2 the server agrees to AEAD suites with
// forward secrecy only; CBC and SHA-1 suites fail the handshake.
func TestTLSSuites(t *testing.T) {
	rk, _ := rsa.GenerateKey(rand.Reader, 2048)
	ek, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	for name, key := range map[string]crypto.Signer{"RSA": rk, "ECDSA": ek} {
		certFile, keyFile := writeTestCert(t, key)
		cfg, err := TLSConfig(certFile, keyFile)
		if err != nil {
			t.Fatal(err)
		}
		ln, err := tls.Listen("tcp", "127.0.0.1:0", cfg)
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		go func() {
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				go func() {
					_ = c.(*tls.Conn).Handshake()
					c.Close()
				}()
			}
		}()
		handshake := func(suite uint16) error {
			c, err := tls.Dial("tcp", ln.Addr().String(), &tls.Config{InsecureSkipVerify: true,
				MinVersion: tls.VersionTLS12, MaxVersion: tls.VersionTLS12, CipherSuites: []uint16{suite}})
			if err == nil {
				c.Close()
			}
			return err
		}
		all := append(tls.CipherSuites(), tls.InsecureCipherSuites()...)
		agreed := 0
		for _, s := range all {
			ecdhe := strings.Contains(s.Name, "_ECDHE_"+name+"_")
			if !ecdhe && !(name == "RSA" && strings.HasPrefix(s.Name, "TLS_RSA_")) {
				continue // needs the other kind of certificate, or is TLS 1.3's
			}
			err := handshake(s.ID)
			aead := ecdhe && (strings.Contains(s.Name, "_GCM_") || strings.Contains(s.Name, "CHACHA20_POLY1305"))
			if aead && err != nil {
				t.Errorf("%s: %s refused: %v", name, s.Name, err)
			}
			if !aead && err == nil {
				t.Errorf("%s: %s agreed", name, s.Name)
			}
			if aead {
				agreed++
			}
		}
		if agreed < 2 {
			t.Errorf("%s: only %d AEAD suites tried", name, agreed)
		}
	}
}
