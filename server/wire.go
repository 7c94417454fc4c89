package server

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"

	"github.com/tablestore/tablestore"
)

// metaLevel is the JSON metadata level a client asked for.
type metaLevel int

const (
	metaMinimal metaLevel = iota
	metaNone
	metaFull
)

func (l metaLevel) String() string {
	switch l {
	case metaNone:
		return "nometadata"
	case metaFull:
		return "fullmetadata"
	}
	return "minimalmetadata"
}

// contentType is the Content-Type of a JSON response at level l. Its
// first component is exactly application/json, which the JavaScript SDK
// requires before it parses a body.
func contentType(l metaLevel) string {
	return "application/json;odata=" + l.String() + ";streaming=true;charset=utf-8"
}

// metadataLevel reads $format, which takes precedence, or Accept. Plain
// application/json and a missing header mean minimal metadata.
func (q *request) metadataLevel() (metaLevel, error) {
	if f := q.res.query.Get("$format"); f != "" {
		l, ok := parseFormat(f)
		if !ok {
			if strings.Contains(strings.ToLower(f), "atom") || strings.Contains(strings.ToLower(f), "xml") {
				return 0, apiError(http.StatusUnsupportedMediaType, "AtomFormatNotSupported", "Atom format is not supported.")
			}
			return 0, apiError(http.StatusBadRequest, "InvalidQueryParameterValue", "The value of the $format query parameter is not valid.")
		}
		return l, nil
	}
	accept := q.r.Header.Get("Accept")
	for _, part := range strings.Split(accept, ",") {
		if l, ok := parseFormat(part); ok {
			return l, nil
		}
	}
	return metaMinimal, nil
}

// parseFormat reads one media type: application/json with an optional
// odata= parameter, or the $format shorthand json.
func parseFormat(s string) (metaLevel, bool) {
	parts := strings.Split(strings.ToLower(s), ";")
	switch strings.TrimSpace(parts[0]) {
	case "application/json", "json":
	default:
		return 0, false
	}
	for _, p := range parts[1:] {
		k, v, _ := strings.Cut(strings.TrimSpace(p), "=")
		if strings.TrimSpace(k) != "odata" {
			continue
		}
		switch strings.TrimSpace(v) {
		case "nometadata":
			return metaNone, true
		case "fullmetadata":
			return metaFull, true
		case "minimalmetadata":
			return metaMinimal, true
		default:
			return 0, false
		}
	}
	return metaMinimal, true
}

// entityJSON writes e at level l through Entity.MarshalJSON, the
// library's wire format: minimal metadata is its output as is; no
// metadata drops odata.etag and the type annotations; full metadata adds
// odata.type, odata.id, odata.editLink and Timestamp's annotation.
// Selected properties the entity lacks come back as null, as in Azure.
func (q *request) entityJSON(e *tablestore.Entity, l metaLevel, sel []string) ([]byte, error) {
	c := *e
	if l == metaNone {
		c.ETag = ""
	}
	raw, err := c.MarshalJSON()
	if err != nil {
		return nil, err
	}
	if l == metaNone {
		if raw, err = stripAnnotations(raw); err != nil {
			return nil, err
		}
	}
	if len(sel) > 0 {
		raw = raw[:len(raw)-1]
		for _, name := range sel {
			if _, ok := e.Properties[name]; ok || isSystemProperty(name) {
				continue
			}
			raw = append(raw, ',')
			raw = appendString(raw, name)
			raw = append(raw, ":null"...)
		}
		raw = append(raw, '}')
	}
	if l == metaFull {
		path := entityPath(q.res.table, e.PartitionKey, e.RowKey)
		var b []byte
		b = append(b, `{"odata.type":`...)
		b = appendString(b, q.h.account+"."+q.res.table)
		b = append(b, `,"odata.id":`...)
		b = appendString(b, q.res.base+path)
		b = append(b, `,"odata.editLink":`...)
		b = appendString(b, path)
		if !e.Timestamp.IsZero() {
			b = append(b, `,"Timestamp@odata.type":"Edm.DateTime"`...)
		}
		b = append(b, ',')
		raw = append(b, raw[1:]...)
	}
	return raw, nil
}

func isSystemProperty(name string) bool {
	switch name {
	case "PartitionKey", "RowKey", "Timestamp":
		return true
	}
	return false
}

// stripAnnotations drops every "X@odata.type" member of a flat JSON
// object written by Entity.MarshalJSON.
func stripAnnotations(raw []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	out := []byte{'{'}
	first := true
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		key, ok := tok.(string)
		if !ok {
			break // the closing brace
		}
		val, err := dec.Token()
		if err != nil {
			return nil, err
		}
		if strings.HasSuffix(key, "@odata.type") {
			continue
		}
		if !first {
			out = append(out, ',')
		}
		first = false
		out = appendString(out, key)
		out = append(out, ':')
		switch v := val.(type) {
		case string:
			out = appendString(out, v)
		case json.Number:
			out = append(out, v...)
		case bool:
			if v {
				out = append(out, "true"...)
			} else {
				out = append(out, "false"...)
			}
		default:
			out = append(out, "null"...)
		}
	}
	return append(out, '}'), nil
}

// appendString appends s as a JSON string.
func appendString(b []byte, s string) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	return append(b, bytes.TrimRight(buf.Bytes(), "\n")...)
}

// writeJSON sends a JSON body with status.
func (q *request) writeJSON(status int, l metaLevel, body []byte) {
	hd := q.w.Header()
	hd.Set("Content-Type", contentType(l))
	hd.Set("Content-Length", itoa(len(body)))
	q.w.WriteHeader(status)
	_, _ = q.w.Write(body)
}

// setExact sets a response header with the exact spelling Azure uses
// (ETag, x-ms-continuation-NextPartitionKey), which Go's canonical form
// would change. Header names are case-insensitive, but some clients match
// them literally.
func setExact(h http.Header, key, value string) {
	h.Del(key)
	h[key] = []string{value}
}
