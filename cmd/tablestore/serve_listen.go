package main

import (
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"runtime/debug"
	"strconv"
	"strings"

	"github.com/tablestore/tablestore/server"
)

// handler makes the accounts' handler and sets the Go memory limit.
func (c *serveConfig) handler(io *stdio, served []server.Account, endpoints []string, metrics *server.Metrics) (http.Handler, error) {
	f := c.f
	opts := &server.Options{Anonymous: *f.anonymous, Logger: c.logger, Metrics: metrics, Bearer: c.bearer, PublicEndpoints: endpoints,
		MaxConcurrentRequests: *f.maxRequests, MaxConcurrentUploads: *f.maxUploads, MemoryBudget: int64(f.budget),
		MinBodyRate: int(f.minRate), BodyGracePeriod: *f.grace, Cosmos: f.cosmos.options()}
	limit, err := memoryLimit(*f.memLimit, opts, len(served))
	if err != nil {
		return nil, err
	}
	h, err := server.NewAccounts(served, opts)
	if err != nil {
		return nil, usagef("%s", errorText(err))
	}
	if h, err = f.kit.handler(h, served, opts); err != nil {
		return nil, err
	}
	if limit > 0 {
		debug.SetMemoryLimit(limit)
		fmt.Fprintf(io.stderr, "serve: Go memory limit %s\n", formatBytes(limit))
	}
	return h, nil
}

// listener makes the server of h, https with TLS, and wraps ln so that
// net/http's own refusals get Azure's error body (inside TLS when there
// is TLS).
func (c *serveConfig) listener(h http.Handler, ln net.Listener) (*http.Server, net.Listener, error) {
	addr := *c.f.addr
	srv := server.NewHTTPServer(addr, h)
	if c.tls != nil {
		var err error
		if srv, err = server.NewHTTPSServer(addr, h, c.tls.cert, c.tls.key); err != nil {
			return nil, nil, usagef("%s", errorText(err))
		}
	}
	if c.logger != nil {
		srv.ErrorLog = slog.NewLogLogger(c.logger.Handler(), slog.LevelWarn)
	}
	if c.tls != nil {
		return srv, server.NewTLSListener(ln, srv.TLSConfig), nil
	}
	return srv, server.NewListener(ln), nil
}

// defaultPublicEndpoints are the service roots clients may reach the
// data listener at by default: its address (127.0.0.1 and localhost
// for an unspecified or loopback one) and, with TLS, each DNS name of
// the certificate (wildcards left out), all with the listener's port.
func defaultPublicEndpoints(addr net.Addr, tlsConf *tlsFiles) ([]string, error) {
	scheme := "http"
	if tlsConf != nil {
		scheme = "https"
	}
	host, port, err := net.SplitHostPort(addr.String())
	if err != nil {
		return nil, err
	}
	hosts := []string{host}
	if ip := net.ParseIP(host); ip != nil && (ip.IsUnspecified() || ip.IsLoopback()) {
		hosts = []string{"127.0.0.1", "localhost"}
	}
	if tlsConf != nil {
		pemBytes, err := os.ReadFile(tlsConf.cert)
		if err != nil {
			return nil, err
		}
		if block, _ := pem.Decode(pemBytes); block != nil && block.Type == "CERTIFICATE" {
			if cert, err := x509.ParseCertificate(block.Bytes); err == nil {
				for _, n := range cert.DNSNames {
					if !strings.HasPrefix(n, "*") {
						hosts = append(hosts, n)
					}
				}
			}
		}
	}
	var out []string
	for _, h := range hosts {
		out = append(out, scheme+"://"+net.JoinHostPort(h, port))
	}
	return out, nil
}

// exposureWarnings are the warnings for a data listener on addr: loud
// for --anonymous or --insecure-accept-any-bearer-token beyond loopback,
// plain for http beyond loopback.
func exposureWarnings(addr net.Addr, anonymous, anyToken, tls bool) []string {
	if loopbackAddr(addr) {
		return nil
	}
	var out []string
	loud := func(flag, without string) {
		out = append(out, "********************************************************************",
			flag+" on "+addr.String()+": ANYONE WHO CAN REACH THIS ADDRESS CAN READ,",
			"CHANGE AND DELETE EVERY TABLE, "+without+". Use it on loopback only.",
			"********************************************************************")
	}
	if anonymous {
		loud("--anonymous", "WITHOUT ANY KEY")
	}
	if anyToken {
		loud("--insecure-accept-any-bearer-token", "WITH ANY BEARER TOKEN")
	}
	if !tls {
		out = append(out, "serving plain http on "+addr.String()+", beyond loopback: keys sign requests but data travels in clear; use --cert and --key")
	}
	return out
}

// dialable is addr as a client can use it: an unspecified address
// (0.0.0.0, ::) becomes 127.0.0.1.
func dialable(addr net.Addr) string {
	if tcp, ok := addr.(*net.TCPAddr); ok && tcp.IP.IsUnspecified() {
		return net.JoinHostPort("127.0.0.1", strconv.Itoa(tcp.Port))
	}
	return addr.String()
}

// loopbackAddr reports whether a listener's address is on loopback only.
func loopbackAddr(a net.Addr) bool {
	tcp, ok := a.(*net.TCPAddr)
	return ok && tcp.IP.IsLoopback()
}
