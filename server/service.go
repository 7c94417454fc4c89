package server

import (
	"bytes"
	"net/http"
	"strings"
	"time"

	"github.com/tablestore/tablestore/edm"
)

// Table service properties (Get and Set Table Service Properties) are
// kept whole, in the canonical form the server writes, in the store
// (cors.go stores them and applies their CORS rules). A Set replaces
// only the top-level elements its body holds, as Azure does.

// serviceSections are the top-level elements of StorageServiceProperties,
// in document order, with their defaults.
var serviceSections = []struct{ name, def string }{
	{"Logging", `<Logging><Version>1.0</Version><Delete>false</Delete><Read>false</Read><Write>false</Write><RetentionPolicy><Enabled>false</Enabled></RetentionPolicy></Logging>`},
	{"HourMetrics", `<HourMetrics><Version>1.0</Version><Enabled>false</Enabled><RetentionPolicy><Enabled>false</Enabled></RetentionPolicy></HourMetrics>`},
	{"MinuteMetrics", `<MinuteMetrics><Version>1.0</Version><Enabled>false</Enabled><RetentionPolicy><Enabled>false</Enabled></RetentionPolicy></MinuteMetrics>`},
	{"Cors", `<Cors />`},
}

// retentionRule: Enabled, and Days (1 to 365) exactly when enabled. Days
// out of range fails the element's check, not the leaf's value: Azure
// answers 366 days InvalidXmlDocument, as recorded by the Go SDK's tests.
var retentionRule = &xmlRule{
	children: []xmlChild{
		{name: "Enabled", rule: leaf(xmlBool), min: 1, max: 1},
		{name: "Days", rule: leaf(nil), min: 0, max: 1},
	},
	check: func(e *xmlElem) bool {
		days := e.child("Days")
		return (e.child("Enabled").text == "true") == (days != nil) && (days == nil || xmlIntRange(1, 365)(days.text))
	},
}

// metricsRule is HourMetrics' and MinuteMetrics' schema: IncludeAPIs is
// given exactly when the metrics are enabled.
var metricsRule = &xmlRule{
	children: []xmlChild{
		{name: "Version", rule: leaf(func(s string) bool { return s == "1.0" }), min: 1, max: 1},
		{name: "Enabled", rule: leaf(xmlBool), min: 1, max: 1},
		{name: "IncludeAPIs", rule: leaf(xmlBool), min: 0, max: 1},
		{name: "RetentionPolicy", rule: retentionRule, min: 1, max: 1},
	},
	check: func(e *xmlElem) bool { return (e.child("Enabled").text == "true") == (e.child("IncludeAPIs") != nil) },
}

// servicePropertiesRule is the schema of Set Table Service Properties'
// body (StorageServiceProperties).
var servicePropertiesRule = &xmlRule{children: []xmlChild{
	{name: "Logging", min: 0, max: 1, rule: &xmlRule{children: []xmlChild{
		{name: "Version", rule: leaf(func(s string) bool { return s == "1.0" }), min: 1, max: 1},
		{name: "Delete", rule: leaf(xmlBool), min: 1, max: 1},
		{name: "Read", rule: leaf(xmlBool), min: 1, max: 1},
		{name: "Write", rule: leaf(xmlBool), min: 1, max: 1},
		{name: "RetentionPolicy", rule: retentionRule, min: 1, max: 1},
	}}},
	{name: "HourMetrics", rule: metricsRule, min: 0, max: 1},
	{name: "MinuteMetrics", rule: metricsRule, min: 0, max: 1},
	{name: "Cors", min: 0, max: 1, rule: &xmlRule{children: []xmlChild{
		{name: "CorsRule", min: 0, max: 5, rule: &xmlRule{children: []xmlChild{
			{name: "AllowedOrigins", rule: leaf(corsList(256, nil)), min: 1, max: 1},
			{name: "AllowedMethods", rule: leaf(corsList(8, corsMethod)), min: 1, max: 1},
			{name: "MaxAgeInSeconds", rule: leaf(xmlIntRange(0, 1<<31-1)), min: 1, max: 1},
			{name: "ExposedHeaders", rule: leaf(corsList(64, nil)), min: 1, max: 1},
			{name: "AllowedHeaders", rule: leaf(corsList(64, nil)), min: 1, max: 1},
		}}},
	}}},
}}

// corsList accepts a comma-separated list of at most n items, each
// accepted by item when it is set. An empty list is allowed.
func corsList(n int, item func(string) bool) func(string) bool {
	return func(s string) bool {
		if s == "" {
			return true
		}
		items := strings.Split(s, ",")
		if len(items) > n {
			return false
		}
		for _, it := range items {
			if it = strings.TrimSpace(it); it == "" || item != nil && !item(it) {
				return false
			}
		}
		return true
	}
}

func corsMethod(m string) bool {
	switch m {
	case "DELETE", "GET", "HEAD", "MERGE", "POST", "OPTIONS", "PUT", "PATCH":
		return true
	}
	return false
}

func (q *request) getServiceProperties() error {
	q.h.propsMu.Lock()
	doc := q.h.props
	q.h.propsMu.Unlock()
	if doc == nil {
		doc = defaultServiceProperties()
	}
	q.writeXML(http.StatusOK, doc)
	return nil
}

// defaultServiceProperties is the document Get Service Properties
// returns until a client sets one.
func defaultServiceProperties() []byte {
	return serviceDocument(nil)
}

// serviceDocument writes a StorageServiceProperties document of the
// canonical sections given, the defaults for the others.
func serviceDocument(sections map[string][]byte) []byte {
	var b bytes.Buffer
	b.WriteString(xmlDeclaration + `<StorageServiceProperties>`)
	for _, s := range serviceSections {
		if sec := sections[s.name]; sec != nil {
			b.Write(sec)
		} else {
			b.WriteString(s.def)
		}
	}
	b.WriteString(`</StorageServiceProperties>`)
	return b.Bytes()
}

// serviceSectionsOf returns the canonical sections of a document this
// server wrote (nil for none, or one that does not read).
func serviceSectionsOf(doc []byte) map[string][]byte {
	out := map[string][]byte{}
	if doc == nil {
		return out
	}
	root, err := parseXML(doc)
	if err != nil || root.name != "StorageServiceProperties" || servicePropertiesRule.validate(root) != nil {
		return out
	}
	for _, c := range servicePropertiesRule.children {
		if e := root.child(c.name); e != nil {
			var b bytes.Buffer
			e.appendXML(&b, c.rule)
			out[c.name] = b.Bytes()
		}
	}
	return out
}

// setServiceProperties checks the whole body against
// servicePropertiesRule before anything changes, then replaces the
// elements it holds, as Azure does, and stores the document (cors.go:
// stored, its CORS rules applied). Errors: InvalidXmlDocument,
// InvalidXmlNodeValue.
func (q *request) setServiceProperties() error {
	root, err := parseXML(q.body)
	if err != nil {
		return err
	}
	if root.name != "StorageServiceProperties" {
		return errBadXML
	}
	if err := servicePropertiesRule.validate(root); err != nil {
		return err
	}
	h := q.h
	h.propsSetMu.Lock() // one read-merge-write at a time
	defer h.propsSetMu.Unlock()
	h.propsMu.Lock()
	sections := serviceSectionsOf(h.props)
	h.propsMu.Unlock()
	for _, c := range servicePropertiesRule.children {
		if e := root.child(c.name); e != nil {
			var b bytes.Buffer
			e.appendXML(&b, c.rule)
			sections[c.name] = b.Bytes()
		}
	}
	if err := h.setServiceProperties(q.r.Context(), serviceDocument(sections)); err != nil {
		return err
	}
	q.w.Header().Set("Content-Length", "0")
	q.w.WriteHeader(http.StatusAccepted)
	return nil
}

// errStatsOnPrimary is Azure's answer to Get Table Service Stats on the
// primary endpoint: the operation exists only on the secondary.
var errStatsOnPrimary = apiError(http.StatusBadRequest, edm.CodeInvalidQueryParameterValue,
	"Value for one of the query parameters specified in the request URI is invalid.")

// getServiceStats serves Get Table Service Stats, on the secondary
// endpoint only, as Azure documents it.
func (q *request) getServiceStats() error {
	if !q.res.secondary {
		return errStatsOnPrimary
	}
	body := xmlDeclaration + `<StorageServiceStats><GeoReplication><Status>live</Status><LastSyncTime>` +
		time.Now().UTC().Format(http.TimeFormat) + `</LastSyncTime></GeoReplication></StorageServiceStats>`
	q.writeXML(http.StatusOK, []byte(body))
	return nil
}

// xmlDeclaration begins every XML body, in Azure's spelling.
const xmlDeclaration = `<?xml version="1.0" encoding="utf-8"?>`

// utf8BOM is the byte-order mark Azure puts before a successful
// operation's XML body (not before an XML error).
const utf8BOM = "\ufeff"

// writeXML sends a successful operation's XML body, after a byte-order
// mark as Azure does.
func (q *request) writeXML(status int, body []byte) {
	q.w.Header().Set("Content-Type", "application/xml")
	q.w.Header().Set("Content-Length", itoa(len(utf8BOM)+len(body)))
	q.w.WriteHeader(status)
	_, _ = q.w.Write(append([]byte(utf8BOM), body...))
}
