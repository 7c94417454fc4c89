package server

import (
	"net/http"
	"strings"

	"github.com/tablestore/tablestore"
	"github.com/tablestore/tablestore/edm"
	"github.com/tablestore/tablestore/internal/wire"
)

// odataLevel is l as the odata parameter of a media type names it.
func odataLevel(l tablestore.JSONMetadata) string {
	switch l {
	case tablestore.NoMetadata:
		return "nometadata"
	case tablestore.FullMetadata:
		return "fullmetadata"
	}
	return "minimalmetadata"
}

// contentType is the Content-Type of a JSON response at level l. Its
// first component is exactly application/json, which the JavaScript SDK
// requires before it parses a body.
func contentType(l tablestore.JSONMetadata) string {
	return "application/json;odata=" + odataLevel(l) + ";streaming=true;charset=utf-8"
}

// jsonContentTypes are the Content-Type header values of the levels,
// shared by every response (see commonHeaders).
var jsonContentTypes = [...][]string{
	tablestore.MinimalMetadata: {contentType(tablestore.MinimalMetadata)},
	tablestore.NoMetadata:      {contentType(tablestore.NoMetadata)},
	tablestore.FullMetadata:    {contentType(tablestore.FullMetadata)},
}

// metadataLevel reads $format, which takes precedence, or Accept. Plain
// application/json and a missing header mean minimal metadata.
func (q *request) metadataLevel() (tablestore.JSONMetadata, error) {
	return metadataLevelOf(q.res.query.Get("$format"), q.r.Header.Get("Accept"))
}

// metadataLevelOf is the metadata level a request asks for by its
// $format (which wins) and Accept header.
func metadataLevelOf(format, accept string) (tablestore.JSONMetadata, error) {
	if f := format; f != "" {
		l, ok := parseFormat(f)
		if !ok {
			if strings.Contains(strings.ToLower(f), "atom") || strings.Contains(strings.ToLower(f), "xml") {
				return 0, apiError(http.StatusUnsupportedMediaType, edm.CodeAtomFormatNotSupported, "Atom format is not supported.")
			}
			return 0, apiError(http.StatusBadRequest, edm.CodeInvalidQueryParameterValue, "The value of the $format query parameter is not valid.")
		}
		return l, nil
	}
	for rest, more := accept, true; more; {
		var part string
		part, rest, more = strings.Cut(rest, ",")
		if l, ok := parseFormat(part); ok {
			return l, nil
		}
	}
	return tablestore.MinimalMetadata, nil
}

// parseFormat reads one media type: application/json with an optional
// odata= parameter, or the $format shorthand json.
func parseFormat(s string) (tablestore.JSONMetadata, bool) {
	mt, params, more := strings.Cut(strings.ToLower(s), ";")
	switch strings.TrimSpace(mt) {
	case "application/json", "json":
	default:
		return 0, false
	}
	for more {
		var p string
		p, params, more = strings.Cut(params, ";")
		k, v, _ := strings.Cut(strings.TrimSpace(p), "=")
		if strings.TrimSpace(k) != "odata" {
			continue
		}
		switch strings.TrimSpace(v) {
		case "nometadata":
			return tablestore.NoMetadata, true
		case "fullmetadata":
			return tablestore.FullMetadata, true
		case "minimalmetadata":
			return tablestore.MinimalMetadata, true
		default:
			return 0, false
		}
	}
	return tablestore.MinimalMetadata, true
}

// jsonOptions are the library's JSON options for level l: full metadata
// adds odata.type, odata.id and odata.editLink for each entity's address
// in this request's table.
func (q *request) jsonOptions(l tablestore.JSONMetadata) tablestore.JSONOptions {
	o := tablestore.JSONOptions{Metadata: l}
	if l == tablestore.FullMetadata {
		o.Type, o.LinkBase, o.LinkTable = q.h.account+"."+q.res.table, q.res.base, q.res.table
	}
	return o
}

// appendString appends s as a JSON string, with the library's writer.
func appendString(b []byte, s string) []byte { return wire.AppendString(b, s) }

// writeJSON sends a JSON body with status.
func (q *request) writeJSON(status int, l tablestore.JSONMetadata, body []byte) {
	hd := q.w.Header()
	hd["Content-Type"] = jsonContentTypes[l]
	hd["Content-Length"] = []string{itoa(len(body))}
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
