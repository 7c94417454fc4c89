package server

import (
	"bytes"
	"net/http"
	"strings"
	"time"
)

// serviceProperties are the Table service properties a client set, each
// top-level element kept as its canonical XML; nil keeps the default.
// Set Service Properties replaces only the elements its body holds, as
// Azure does. They are kept in memory and have no effect.
type serviceProperties struct {
	sections map[string][]byte
}

// serviceSections are the top-level elements of StorageServiceProperties,
// in document order, with their defaults.
var serviceSections = []struct{ name, def string }{
	{"Logging", `<Logging><Version>1.0</Version><Delete>false</Delete><Read>false</Read><Write>false</Write><RetentionPolicy><Enabled>false</Enabled></RetentionPolicy></Logging>`},
	{"HourMetrics", `<HourMetrics><Version>1.0</Version><Enabled>false</Enabled><RetentionPolicy><Enabled>false</Enabled></RetentionPolicy></HourMetrics>`},
	{"MinuteMetrics", `<MinuteMetrics><Version>1.0</Version><Enabled>false</Enabled><RetentionPolicy><Enabled>false</Enabled></RetentionPolicy></MinuteMetrics>`},
	{"Cors", `<Cors />`},
}

// retentionRule: Enabled, and Days (1 to 365) exactly when enabled.
var retentionRule = &xmlRule{
	children: []xmlChild{
		{name: "Enabled", rule: leaf(xmlBool), min: 1, max: 1},
		{name: "Days", rule: leaf(xmlIntRange(1, 365)), min: 0, max: 1},
	},
	check: func(e *xmlElem) bool { return (e.child("Enabled").text == "true") == (e.child("Days") != nil) },
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

func (q *request) getServiceProperties() {
	q.h.propsMu.Lock()
	p := q.h.props
	q.h.propsMu.Unlock()
	var b bytes.Buffer
	b.WriteString(`<?xml version="1.0" encoding="utf-8"?><StorageServiceProperties>`)
	for _, s := range serviceSections {
		if p != nil && p.sections[s.name] != nil {
			b.Write(p.sections[s.name])
		} else {
			b.WriteString(s.def)
		}
	}
	b.WriteString(`</StorageServiceProperties>`)
	q.writeXML(http.StatusOK, b.Bytes())
}

// setServiceProperties checks the whole document against
// servicePropertiesRule before it changes anything, then replaces the
// elements the body holds. Errors: InvalidXmlDocument.
func (q *request) setServiceProperties() {
	root, err := parseXML(q.body)
	if err != nil {
		q.fail(err)
		return
	}
	if root.name != "StorageServiceProperties" {
		q.fail(errBadXML)
		return
	}
	if err := servicePropertiesRule.validate(root); err != nil {
		q.fail(err)
		return
	}
	q.h.propsMu.Lock()
	next := &serviceProperties{sections: map[string][]byte{}}
	if q.h.props != nil {
		for k, v := range q.h.props.sections {
			next.sections[k] = v
		}
	}
	for _, c := range servicePropertiesRule.children {
		if e := root.child(c.name); e != nil {
			var b bytes.Buffer
			e.appendXML(&b, c.rule)
			next.sections[c.name] = b.Bytes()
		}
	}
	q.h.props = next
	q.h.propsMu.Unlock()
	q.w.Header().Set("Content-Length", "0")
	q.w.WriteHeader(http.StatusAccepted)
}

func (q *request) getServiceStats() {
	body := `<?xml version="1.0" encoding="utf-8"?><StorageServiceStats><GeoReplication><Status>live</Status><LastSyncTime>` +
		time.Now().UTC().Format(http.TimeFormat) + `</LastSyncTime></GeoReplication></StorageServiceStats>`
	q.writeXML(http.StatusOK, []byte(body))
}

func (q *request) writeXML(status int, body []byte) {
	q.w.Header().Set("Content-Type", "application/xml")
	q.w.Header().Set("Content-Length", itoa(len(body)))
	q.w.WriteHeader(status)
	_, _ = q.w.Write(body)
}
