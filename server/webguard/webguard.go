// Package webguard holds the checks that keep a browser from being used
// against a listener meant for this machine or a private network: the
// Host allow-list that defeats DNS rebinding, and the cross-site test
// for requests that change something. The web console and the REST
// server's admin listener share them.
package webguard

import (
	"net"
	"net/http"
	"strings"
)

// HostAllowed reports whether a Host header (host or host:port) names an
// IP address, localhost, or one of names (case-insensitive). A name a
// visitor's DNS could point anywhere is refused unless configured, so a
// page on another site cannot reach the listener by rebinding its own
// name to this machine's address.
func HostAllowed(hostport string, names []string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if host == "" {
		return false
	}
	if net.ParseIP(host) != nil || strings.EqualFold(host, "localhost") {
		return true
	}
	for _, n := range names {
		if strings.EqualFold(n, host) {
			return true
		}
	}
	return false
}

// CrossSite returns why r comes from another site as its browser tells
// it, or "" when nothing says so: Sec-Fetch-Site other than same-origin,
// or an Origin other than the request's own scheme and Host. Clients
// that are not browsers send neither header and pass.
func CrossSite(r *http.Request) string {
	if site := r.Header.Get("Sec-Fetch-Site"); site != "" && site != "same-origin" {
		return "the request comes from another site (Sec-Fetch-Site: " + site + ")"
	}
	if origin := r.Header.Get("Origin"); origin != "" {
		scheme := "http"
		if r.TLS != nil {
			scheme = "https"
		}
		if origin != scheme+"://"+r.Host {
			return "the request comes from another origin (" + origin + ")"
		}
	}
	return ""
}
