package server

import (
	"bytes"
	"context"
	"encoding/xml"
	"net/http"
	"strconv"
	"strings"

	"github.com/tablestore/tablestore"
	"github.com/tablestore/tablestore/edm"
)

// CORS as Azure Storage applies it, from the rules of the stored Table
// Service Properties (Set Table Service Properties):
//
//   - A preflight (OPTIONS with Origin and Access-Control-Request-Method)
//     is answered without authentication from the first rule whose
//     origins, methods and headers all allow it: 200 with
//     Access-Control-Allow-Origin (the origin), -Allow-Methods (the
//     method asked), -Allow-Headers (the headers asked), -Max-Age and
//     -Allow-Credentials; else 403 CorsPreflightFailure. A preflight
//     lacking either header is 400 InvalidHeaderValue.
//   - Any other request with an Origin header that the first matching
//     rule (origin and method) allows gets Access-Control-Allow-Origin
//     (the origin, or * for a rule allowing every origin),
//     Access-Control-Expose-Headers (the response's headers that the
//     rule's ExposedHeaders name, exactly or by a prefix ending in *),
//     and, unless the rule allows every origin, Vary: Origin and
//     Access-Control-Allow-Credentials: true. With rules but no match,
//     a GET or HEAD gets Vary: Origin only.
//   - A request without Origin gets no Access-Control header (Azure's
//     table of CORS scenarios); a GET or HEAD, when there are rules,
//     gets Vary: Origin unless a rule allowing every origin and the
//     method matches (Azure's table of when Vary is set).
//   - With no rules there are no CORS headers at all.

// corsRule is one parsed CorsRule.
type corsRule struct {
	origins []string // lowercase; "*" alone means any
	anyOrig bool
	methods []string // uppercase
	allowed []string // allowed headers, lowercase, maybe ending in *
	exposed []string // exposed headers, lowercase, maybe ending in *
	maxAge  int
}

// corsRules are the rules of a service properties document, in order.
type corsRules []corsRule

// xmlServiceProperties is the part of the document the server reads.
type xmlServiceProperties struct {
	XMLName xml.Name `xml:"StorageServiceProperties"`
	Cors    *struct {
		Rules []struct {
			AllowedOrigins  string `xml:"AllowedOrigins"`
			AllowedMethods  string `xml:"AllowedMethods"`
			AllowedHeaders  string `xml:"AllowedHeaders"`
			ExposedHeaders  string `xml:"ExposedHeaders"`
			MaxAgeInSeconds string `xml:"MaxAgeInSeconds"`
		} `xml:"CorsRule"`
	} `xml:"Cors"`
}

var errBadCORS = apiError(http.StatusBadRequest, edm.CodeInvalidXMLNodeValue, "The value for one of the XML nodes is not in the correct format.")

// corsMethods are the methods a rule may allow (Azure's list).
var corsMethods = map[string]bool{"DELETE": true, "GET": true, "HEAD": true, "MERGE": true, "POST": true,
	"OPTIONS": true, "PUT": true, "PATCH": true}

// parseServiceProperties reads a service properties document and its
// CORS rules, applying Azure's limits: at most five rules, known
// methods, a non-negative MaxAgeInSeconds, at most 64 origins and 64
// headers per list. Errors: InvalidXmlDocument, InvalidXmlNodeValue.
func parseServiceProperties(body []byte) (corsRules, error) {
	var doc xmlServiceProperties
	if err := xml.Unmarshal(body, &doc); err != nil {
		return nil, errBadXML
	}
	if doc.Cors == nil {
		return nil, nil
	}
	if len(doc.Cors.Rules) > 5 {
		return nil, apiError(http.StatusBadRequest, edm.CodeInvalidXMLNodeValue, "The value for one of the XML nodes is not in the correct format: at most five CORS rules are allowed.")
	}
	list := func(s string, lower bool) ([]string, bool) {
		var out []string
		for _, p := range strings.Split(s, ",") {
			if p = strings.TrimSpace(p); p == "" {
				continue
			}
			if len(p) > 256 {
				return nil, false
			}
			if lower {
				p = strings.ToLower(p)
			}
			out = append(out, p)
		}
		return out, len(out) <= 64
	}
	var rules corsRules
	for _, x := range doc.Cors.Rules {
		var r corsRule
		var ok bool
		if r.origins, ok = list(x.AllowedOrigins, true); !ok || len(r.origins) == 0 {
			return nil, errBadCORS
		}
		for _, o := range r.origins {
			if o == "*" {
				r.anyOrig = true
			}
		}
		methods, ok := list(x.AllowedMethods, false)
		if !ok || len(methods) == 0 {
			return nil, errBadCORS
		}
		for _, m := range methods {
			m = strings.ToUpper(m)
			if !corsMethods[m] {
				return nil, errBadCORS
			}
			r.methods = append(r.methods, m)
		}
		if r.allowed, ok = list(x.AllowedHeaders, true); !ok {
			return nil, errBadCORS
		}
		if r.exposed, ok = list(x.ExposedHeaders, true); !ok {
			return nil, errBadCORS
		}
		if s := strings.TrimSpace(x.MaxAgeInSeconds); s != "" {
			n, err := strconv.Atoi(s)
			if err != nil || n < 0 {
				return nil, errBadCORS
			}
			r.maxAge = n
		}
		rules = append(rules, r)
	}
	return rules, nil
}

func (r *corsRule) allowsOrigin(origin string) bool {
	if r.anyOrig {
		return true
	}
	o := strings.ToLower(strings.TrimSpace(origin))
	for _, x := range r.origins {
		if x == o {
			return true
		}
	}
	return false
}

func (r *corsRule) allowsMethod(m string) bool {
	m = strings.ToUpper(strings.TrimSpace(m))
	for _, x := range r.methods {
		if x == m {
			return true
		}
	}
	return false
}

// headerMatch reports whether name (lowercase) matches a pattern list
// entry: equal, or a prefix ending in *.
func headerMatch(patterns []string, name string) bool {
	for _, p := range patterns {
		if p == name || strings.HasSuffix(p, "*") && strings.HasPrefix(name, p[:len(p)-1]) {
			return true
		}
	}
	return false
}

func (r *corsRule) allowsHeaders(list string) bool {
	for _, h := range strings.Split(list, ",") {
		if h = strings.ToLower(strings.TrimSpace(h)); h != "" && !headerMatch(r.allowed, h) {
			return false
		}
	}
	return true
}

// cors arranges the CORS headers of a cross-origin response. It runs
// before admission and authentication.
func (q *request) cors() {
	rules := q.h.cors.Load()
	origin := q.r.Header.Get("Origin")
	if rules == nil || len(*rules) == 0 {
		return
	}
	hd := q.w.Header()
	getHead := q.r.Method == http.MethodGet || q.r.Method == http.MethodHead
	if origin == "" {
		// A GET or HEAD without Origin, with rules: no Access-Control
		// header; Vary: Origin unless a rule allowing every origin and
		// the method answers every origin alike, so caches keep the
		// answers to cross-origin requests apart.
		if !getHead {
			return
		}
		for i := range *rules {
			r := &(*rules)[i]
			if r.anyOrig && r.allowsMethod(q.r.Method) {
				return
			}
		}
		hd.Add("Vary", "Origin")
		return
	}
	for i := range *rules {
		r := &(*rules)[i]
		if !r.allowsOrigin(origin) || !r.allowsMethod(q.r.Method) {
			continue
		}
		if r.anyOrig {
			hd.Set("Access-Control-Allow-Origin", "*")
		} else {
			hd.Set("Access-Control-Allow-Origin", origin)
			hd.Add("Vary", "Origin")
			hd.Set("Access-Control-Allow-Credentials", "true")
		}
		if len(r.exposed) > 0 {
			q.w = &corsWriter{ResponseWriter: q.w, exposed: r.exposed}
		}
		return
	}
	if getHead {
		hd.Add("Vary", "Origin")
	}
}

// preflight answers an OPTIONS request, a CORS preflight. It runs
// before admission and authentication: preflights carry no credentials.
func (q *request) preflight() error {
	q.preflit = true
	rules := q.h.cors.Load()
	origin := q.r.Header.Get("Origin")
	method := q.r.Header.Get("Access-Control-Request-Method")
	if origin == "" || method == "" {
		return apiError(http.StatusBadRequest, edm.CodeInvalidHeaderValue, "A required CORS header is not present.")
	}
	asked := q.r.Header.Get("Access-Control-Request-Headers")
	if rules != nil {
		for i := range *rules {
			r := &(*rules)[i]
			if !r.allowsOrigin(origin) || !r.allowsMethod(method) || !r.allowsHeaders(asked) {
				continue
			}
			hd := q.w.Header()
			hd.Set("Access-Control-Allow-Origin", origin)
			hd.Set("Access-Control-Allow-Methods", strings.ToUpper(strings.TrimSpace(method)))
			if asked != "" {
				hd.Set("Access-Control-Allow-Headers", asked)
			}
			hd.Set("Access-Control-Max-Age", strconv.Itoa(r.maxAge))
			hd.Set("Access-Control-Allow-Credentials", "true")
			hd.Add("Vary", "Origin")
			hd.Set("Content-Length", "0")
			q.w.WriteHeader(http.StatusOK)
			return nil
		}
	}
	return apiError(http.StatusForbidden, edm.CodeCorsPreflightFailure, "CORS not enabled or no matching rule found for this request.")
}

// corsWriter sets Access-Control-Expose-Headers from the response's own
// headers when the response starts.
type corsWriter struct {
	http.ResponseWriter
	exposed []string
	started bool
}

func (c *corsWriter) WriteHeader(code int) {
	if !c.started {
		c.started = true
		hd := c.ResponseWriter.Header()
		var names []string
		for k := range hd {
			lk := strings.ToLower(k)
			if strings.HasPrefix(lk, "access-control-") {
				continue
			}
			if headerMatch(c.exposed, lk) {
				names = append(names, k)
			}
		}
		for _, p := range c.exposed { // named headers are exposed even when absent
			if !strings.HasSuffix(p, "*") && hd.Get(p) == "" {
				names = append(names, p)
			}
		}
		if len(names) > 0 {
			sortStrings(names)
			hd.Set("Access-Control-Expose-Headers", strings.Join(names, ","))
		}
	}
	c.ResponseWriter.WriteHeader(code)
}

// Unwrap gives http.ResponseController the connection's writer, for the
// body's read deadlines (body.go).
func (c *corsWriter) Unwrap() http.ResponseWriter { return c.ResponseWriter }

func (c *corsWriter) Write(b []byte) (int, error) {
	if !c.started {
		c.WriteHeader(http.StatusOK)
	}
	return c.ResponseWriter.Write(b)
}

func sortStrings(s []string) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

// loadServiceProperties reads the stored service properties at New:
// the document Get Service Properties returns and its CORS rules. A
// store that cannot keep them (a remote driver) keeps them in memory; a
// stored document that no longer parses is served back but applies no
// CORS rules.
func (h *handler) loadServiceProperties() {
	doc, err := root.ServiceProperties(h.db, context.Background())
	if err != nil || doc == nil {
		return
	}
	h.props = doc
	if rules, err := parseServiceProperties(doc); err == nil {
		h.cors.Store(&rules)
	}
}

// setServiceProperties validates a Set Table Service Properties body,
// stores it durably when the store can keep it, and applies its CORS
// rules at once.
func (h *handler) setServiceProperties(ctx context.Context, body []byte) error {
	rules, err := parseServiceProperties(body)
	if err != nil {
		return err
	}
	doc := bytes.Clone(body)
	if err := root.SetServiceProperties(h.db, ctx, doc); err != nil && tablestore.ErrorCode(err) != edm.CodeNotImplemented {
		return err
	}
	h.propsMu.Lock()
	h.props = doc
	h.cors.Store(&rules)
	h.propsMu.Unlock()
	return nil
}
