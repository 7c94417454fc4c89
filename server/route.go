package server

import (
	"net"
	"net/http"
	"net/url"
	"strings"

	"github.com/tablestore/tablestore/edm"
)

// kind is what a request path names.
type kind int

const (
	kindService  kind = iota + 1 // the service root, ?restype=service&comp=...
	kindTables                   // Tables
	kindTable                    // Tables('t')
	kindEntities                 // t or t()
	kindEntity                   // t(PartitionKey='p',RowKey='r')
	kindBatch                    // $batch
	kindACL                      // t?comp=acl
	kindExt                      // $tablestore/... (ext.go)
)

// resource is a routed request path.
type resource struct {
	kind   kind
	table  string // kindTable, kindEntities, kindEntity, kindACL
	pk, rk string // kindEntity
	comp   string // kindService: properties or stats
	// secondary says the request names the secondary endpoint
	// (ACCOUNT-secondary).
	secondary bool
	// rawPath is the path exactly as the request-target carries it; the
	// SharedKey signatures cover it.
	rawPath string
	// base is the service root as clients address it, ending in '/':
	// http://host/{account}/ (path-style) or http://host/ (host-style).
	base  string
	query url.Values
	// ext and index: what a kindExt path names (ext.go).
	ext   extKind
	index string
}

// route reads the request-target: the account (path-style or
// host-style), then the resource, with OData key literals decoded.
func (h *handler) route(r *http.Request) (resource, error) {
	var res resource
	res.rawPath = requestPath(r)
	q, err := parseQuery(r.URL.RawQuery)
	if err != nil {
		return res, err
	}
	res.query = q
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	if a := hostAccount(r.Host); a != "" && strings.TrimSuffix(a, secondarySuffix) != h.account {
		return res, errHostAccount
	}
	rest, pathStyle := h.stripAccount(r.Host, res.rawPath)
	if res.secondary, err = h.checkSecondary(r, res.rawPath); err != nil { // accounts.go: ACCOUNT-secondary is read-only
		return res, err
	}
	res.base = scheme + "://" + r.Host + "/"
	if pathStyle {
		res.base += h.account + "/"
	}
	if isExtPath(rest) {
		return parseExt(res, rest)
	}
	if c := q.Get("comp"); c == "acl" {
		res.kind = kindACL // refined below: must name a table
	}
	return parseResource(res, rest)
}

// parseQuery splits a query string on '&' only: clients leave the ';'
// of $format=application/json;odata=... unescaped, which url.ParseQuery
// refuses. Errors: InvalidQueryParameterValue for a bad escape.
func parseQuery(raw string) (url.Values, error) {
	if raw == "" {
		return nil, nil // reads of a nil url.Values find nothing
	}
	v := url.Values{}
	for _, kv := range strings.Split(raw, "&") {
		if kv == "" {
			continue
		}
		k, val, _ := strings.Cut(kv, "=")
		k, err1 := url.QueryUnescape(k)
		val, err2 := url.QueryUnescape(val)
		if err1 != nil || err2 != nil {
			return nil, apiError(http.StatusBadRequest, edm.CodeInvalidQueryParameterValue, "The query string is not well formed.")
		}
		v.Add(k, val)
	}
	return v, nil
}

var errHostAccount = apiError(http.StatusForbidden, edm.CodeAuthenticationFailed,
	"Server failed to authenticate the request: the Host header names an account this server does not serve.")

// hostAccount returns the account a host-style Host header names, the
// first label of {account}.table.{domain} (Azure's
// {account}.table.core.windows.net), lowercased; "" for any other host:
// an IP address, localhost, a name without "table" as its second label.
func hostAccount(host string) string {
	hostname := host
	if strings.IndexByte(host, ':') >= 0 { // SplitHostPort allocates its error for a host without a port
		if h, _, err := net.SplitHostPort(host); err == nil {
			hostname = h
		}
	}
	first, rest, ok := strings.Cut(hostname, ".")
	if !ok {
		return ""
	}
	second, _, ok := strings.Cut(rest, ".")
	if !ok || !strings.EqualFold(second, "table") || net.ParseIP(hostname) != nil {
		return ""
	}
	return strings.ToLower(first)
}

// hostNamesAccount reports whether host's first label is account or its
// secondary endpoint (ACCOUNT-secondary).
func hostNamesAccount(host, account string) bool {
	hostname, _, _ := strings.Cut(host, ":")
	label, _, _ := strings.Cut(strings.ToLower(hostname), ".")
	return label == account || label == account+secondarySuffix
}

// stripAccount returns the path after the account. Path-style addressing
// puts the account in the first segment; otherwise (host-style) the whole
// path names the resource. A path that is only the account, under a
// host-style Host naming it, is a table of that name.
func (h *handler) stripAccount(host, raw string) (rest string, pathStyle bool) {
	seg, after, _ := strings.Cut(strings.TrimPrefix(raw, "/"), "/")
	if (seg == h.account || seg == h.account+secondarySuffix) && (!hostNamesAccount(host, h.account) || after != "") {
		return after, true
	}
	return strings.TrimPrefix(raw, "/"), false
}

// requestPath is the path part of the request-target as sent, still
// percent-encoded.
func requestPath(r *http.Request) string {
	u := r.RequestURI
	if u == "" { // a request built in-process, not read from the wire
		return r.URL.EscapedPath()
	}
	if !strings.HasPrefix(u, "/") {
		if p, err := url.Parse(u); err == nil {
			return p.EscapedPath()
		}
	}
	if i := strings.IndexByte(u, '?'); i >= 0 {
		u = u[:i]
	}
	return u
}

// parseResource classifies the path after the account (still encoded,
// without its leading '/').
func parseResource(res resource, rest string) (resource, error) {
	acl := res.kind == kindACL
	rest = strings.TrimSuffix(rest, "/")
	if rest == "" {
		if res.query.Get("restype") == "service" {
			switch c := res.query.Get("comp"); c {
			case "properties", "stats":
				res.kind, res.comp = kindService, c
				return res, nil
			}
		}
		return res, errInvalidURI
	}
	if strings.Contains(rest, "/") {
		return res, errInvalidURI
	}
	seg, err := url.PathUnescape(rest)
	if err != nil {
		return res, errInvalidURI
	}
	name, args, parens, err := splitSegment(seg)
	if err != nil {
		return res, err
	}
	switch {
	case name == "$batch" && !parens:
		if acl {
			return res, errInvalidURI
		}
		res.kind = kindBatch
	case strings.EqualFold(name, "Tables"):
		if acl {
			return res, errInvalidURI
		}
		if strings.TrimSpace(args) == "" {
			res.kind = kindTables
			return res, nil
		}
		t, err := parseTableArg(args)
		if err != nil {
			return res, err
		}
		res.kind, res.table = kindTable, t
	default:
		res.table = name
		switch {
		case acl:
			if parens {
				return res, errInvalidURI
			}
		case strings.TrimSpace(args) == "":
			res.kind = kindEntities
		default:
			pk, rk, err := parseKeyArgs(args)
			if err != nil {
				return res, err
			}
			res.kind, res.pk, res.rk = kindEntity, pk, rk
		}
	}
	return res, nil
}

// splitSegment splits "name(args)" into name and args; parens reports
// whether the parentheses were there.
func splitSegment(seg string) (name, args string, parens bool, err error) {
	i := strings.IndexByte(seg, '(')
	if i < 0 {
		if strings.ContainsAny(seg, ")'") {
			return "", "", false, errInvalidURI
		}
		return seg, "", false, nil
	}
	if !strings.HasSuffix(seg, ")") || i == 0 {
		return "", "", false, errInvalidURI
	}
	return seg[:i], seg[i+1 : len(seg)-1], true, nil
}

var errBadKeys = apiError(http.StatusBadRequest, edm.CodeInvalidInput, "One of the request inputs is not valid: the resource path must name the entity as (PartitionKey='...',RowKey='...').")

// parseTableArg reads Tables('t') (or Tables(TableName='t')).
func parseTableArg(args string) (string, error) {
	p := literalParser{s: args}
	p.space()
	if p.word("TableName") {
		p.space()
		if !p.byte('=') {
			return "", errInvalidURI
		}
		p.space()
	}
	t, ok := p.stringLit()
	p.space()
	if !ok || p.i != len(p.s) {
		return "", errInvalidURI
	}
	return t, nil
}

// parseKeyArgs reads PartitionKey='p',RowKey='r' (either order, spaces
// allowed around the tokens) with ” standing for one quote.
func parseKeyArgs(args string) (pk, rk string, err error) {
	p := literalParser{s: args}
	var havePK, haveRK bool
	for n := 0; n < 2; n++ {
		if n == 1 {
			p.space()
			if !p.byte(',') {
				return "", "", errBadKeys
			}
		}
		p.space()
		var dst *string
		switch {
		case p.word("PartitionKey") && !havePK:
			dst, havePK = &pk, true
		case p.word("RowKey") && !haveRK:
			dst, haveRK = &rk, true
		default:
			return "", "", errBadKeys
		}
		p.space()
		if !p.byte('=') {
			return "", "", errBadKeys
		}
		p.space()
		v, ok := p.stringLit()
		if !ok {
			return "", "", errBadKeys
		}
		*dst = v
	}
	p.space()
	if p.i != len(p.s) {
		return "", "", errBadKeys
	}
	return pk, rk, nil
}

// literalParser reads the OData key syntax.
type literalParser struct {
	s string
	i int
}

func (p *literalParser) space() {
	for p.i < len(p.s) && (p.s[p.i] == ' ' || p.s[p.i] == '\t') {
		p.i++
	}
}

func (p *literalParser) byte(c byte) bool {
	if p.i < len(p.s) && p.s[p.i] == c {
		p.i++
		return true
	}
	return false
}

func (p *literalParser) word(w string) bool {
	if strings.HasPrefix(p.s[p.i:], w) {
		p.i += len(w)
		return true
	}
	return false
}

// stringLit reads 'text' with ” for a quote.
func (p *literalParser) stringLit() (string, bool) {
	if !p.byte('\'') {
		return "", false
	}
	var b strings.Builder
	for p.i < len(p.s) {
		c := p.s[p.i]
		p.i++
		if c != '\'' {
			b.WriteByte(c)
			continue
		}
		if p.i < len(p.s) && p.s[p.i] == '\'' {
			b.WriteByte('\'')
			p.i++
			continue
		}
		return b.String(), true
	}
	return "", false
}

// keyLiteral writes a key as an OData string literal, quotes doubled.
func keyLiteral(s string) string {
	return "'" + strings.ReplaceAll(s, "'", "''") + "'"
}
