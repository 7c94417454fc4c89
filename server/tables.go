package server

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/tablestore/tablestore"
	"github.com/tablestore/tablestore/edm"
	"github.com/tablestore/tablestore/filter"
	"github.com/tablestore/tablestore/internal/wire"
)

// opRoute is what a request asks for, as admission sees it.
type opRoute struct {
	op op // the permission it needs
	// keyed says the URL names the entity (res.pk, res.rk) the permission
	// must cover; an insert's keys are in its body and checked there.
	keyed bool
	body  bool // it reads a request body
	// stream runs it outside the work slots, in a stream slot: a
	// long-poll or an event stream (ext_changes.go).
	stream bool
	run    operation
}

// operation serves one routed, authorized request: it writes the
// response, or returns the error the request is answered with (see
// answer), having written nothing.
type operation func(*request) error

// resolve resolves the routed resource and the method to the
// operation. Errors: MethodNotAllowed, InvalidUri.
func (q *request) resolve(method string) (opRoute, error) {
	type o = opRoute
	switch q.res.kind {
	case kindService:
		switch {
		case q.res.comp == "properties" && method == http.MethodGet:
			return o{op: opGetService, run: (*request).getServiceProperties}, nil
		case q.res.comp == "properties" && method == http.MethodPut:
			return o{op: opSetService, body: true, run: (*request).setServiceProperties}, nil
		case q.res.comp == "stats" && method == http.MethodGet:
			return o{op: opGetService, run: (*request).getServiceStats}, nil
		}
	case kindTables:
		switch method {
		case http.MethodGet:
			return o{op: opListTables, run: (*request).listTables}, nil
		case http.MethodPost:
			return o{op: opCreateTable, body: true, run: (*request).createTable}, nil
		}
	case kindTable:
		switch method {
		case http.MethodGet:
			return o{op: opListTables, run: (*request).getTable}, nil
		case http.MethodDelete:
			return o{op: opDeleteTable, run: (*request).deleteTable}, nil
		}
	case kindACL:
		switch method {
		case http.MethodGet:
			return o{op: opGetACL, run: (*request).getACL}, nil
		case http.MethodPut:
			return o{op: opSetACL, body: true, run: (*request).setACL}, nil
		}
	case kindBatch:
		if method == http.MethodPost {
			return o{op: opBatch, body: true, run: (*request).batch}, nil
		}
	case kindEntities:
		switch method {
		case http.MethodGet:
			return o{op: opRead, run: (*request).queryEntities}, nil
		case http.MethodPost:
			return o{op: opInsert, body: true, run: (*request).insertEntity}, nil
		}
	case kindEntity:
		switch method {
		case http.MethodGet:
			return o{op: opRead, keyed: true, run: (*request).getEntity}, nil
		case http.MethodPut:
			return o{op: writeOp(q.r), keyed: true, body: true, run: func(q *request) error { return q.writeEntity(tablestore.Replace) }}, nil
		case "MERGE", http.MethodPatch:
			return o{op: writeOp(q.r), keyed: true, body: true, run: func(q *request) error { return q.writeEntity(tablestore.Merge) }}, nil
		case http.MethodDelete:
			return o{op: opDelete, keyed: true, run: (*request).deleteEntity}, nil
		}
	case kindExt:
		return q.resolveExt(method) // ext.go
	default:
		return o{}, errInvalidURI
	}
	return o{}, errMethodNotAllowed
}

// writeOp is the permission a PUT or MERGE needs: an update with
// If-Match, an upsert (insert and update) without.
func writeOp(r *http.Request) op {
	if r.Header.Get("If-Match") != "" {
		return opUpdate
	}
	return opUpsert
}

// filterAPIError maps a filter package error to Azure's answer.
func filterAPIError(err error) error {
	var fe *filter.Error
	if !errors.As(err, &fe) {
		return err
	}
	if fe.Code == edm.CodeNotImplemented {
		return apiError(http.StatusNotImplemented, edm.CodeNotImplemented, fe.Error())
	}
	return apiError(http.StatusBadRequest, edm.CodeInvalidInput, fe.Error())
}

// parseTop reads $top: absent is 0 (the default page), otherwise
// 0..1000; anything else is InvalidInput.
func parseTop(q *request) (top int, given bool, err error) {
	s, ok := q.res.query["$top"]
	if !ok {
		return 0, false, nil
	}
	n, err := strconv.Atoi(strings.TrimSpace(s[0]))
	if err != nil || n < 0 || n > 1000 {
		return 0, false, apiError(http.StatusBadRequest, edm.CodeInvalidInput, "One of the request inputs is not valid: $top must be an integer from 1 to 1000.")
	}
	return n, true, nil
}

// tableName is one table name as filter.Properties, for Query Tables.
type tableName string

func (t tableName) Lookup(name string) (edm.Value, bool) {
	if name != "TableName" {
		return edm.Value{}, false
	}
	return edm.Value{Type: edm.TypeString, Bytes: []byte(t)}, true
}

// tableQueryArgs reads Query Tables' metadata level, $filter (compiled)
// and $top (given tells whether the request had one).
func (q *request) tableQueryArgs() (l tablestore.JSONMetadata, f *filter.Filter, top int, given bool, err error) {
	if l, err = q.metadataLevel(); err != nil {
		return
	}
	if f, err = filter.Compile(q.res.query.Get("$filter"), nil); err != nil {
		err = filterAPIError(err)
		return
	}
	top, given, err = parseTop(q)
	return
}

// listTables serves Query Tables: $filter on TableName, $top and
// NextTableName.
func (q *request) listTables() error {
	l, f, top, given, err := q.tableQueryArgs()
	if err != nil {
		return err
	}
	if !given || top == 0 {
		if given {
			top = 0
		} else {
			top = 1000
		}
	}
	var names []string
	next := ""
	cont := q.res.query.Get("NextTableName")
	ctx := q.r.Context()
scan:
	for {
		page, err := q.h.db.ListTables(ctx, &tablestore.ListTablesOptions{Continuation: cont})
		if err != nil {
			return err
		}
		for _, n := range page.Names {
			if f.Root != nil && !f.Match(tableName(n)) {
				continue
			}
			if len(names) == top {
				next = n
				break scan
			}
			names = append(names, n)
		}
		if page.Continuation == "" {
			break
		}
		cont = page.Continuation
	}
	if top == 0 {
		next = ""
	}
	var b []byte
	b = append(b, '{')
	if l != tablestore.NoMetadata {
		b = append(b, `"odata.metadata":`...)
		b = appendString(b, q.res.base+"$metadata#Tables")
		b = append(b, ',')
	}
	b = append(b, `"value":[`...)
	for i, n := range names {
		if i > 0 {
			b = append(b, ',')
		}
		b = q.appendTable(b, l, n)
	}
	b = append(b, "]}"...)
	if next != "" {
		setExact(q.w.Header(), "x-ms-continuation-NextTableName", next)
	}
	q.writeJSON(http.StatusOK, l, b)
	return nil
}

// appendTable appends one table object at level l.
func (q *request) appendTable(b []byte, l tablestore.JSONMetadata, name string) []byte {
	b = append(b, '{')
	if l == tablestore.FullMetadata {
		link := "Tables(" + keyLiteral(name) + ")"
		b = append(b, `"odata.type":`...)
		b = appendString(b, q.h.account+".Tables")
		b = append(b, `,"odata.id":`...)
		b = appendString(b, q.res.base+link)
		b = append(b, `,"odata.editLink":`...)
		b = appendString(b, link)
		b = append(b, ',')
	}
	b = append(b, `"TableName":`...)
	b = appendString(b, name)
	return append(b, '}')
}

// tableElement is the single-table body: Create Table's echo and Get
// Table.
func (q *request) tableElement(l tablestore.JSONMetadata, name string) []byte {
	t := q.appendTable(nil, l, name)
	if l == tablestore.NoMetadata {
		return t
	}
	b := []byte(`{"odata.metadata":`)
	b = appendString(b, q.res.base+"$metadata#Tables/@Element")
	b = append(b, ',')
	return append(b, t[1:]...)
}

// lookupTable returns the table's name as created. Errors: TableNotFound
// (or ResourceNotFound when notFound says so).
func (q *request) lookupTable(name string, notFound tablestore.Code) (string, error) {
	page, err := q.h.db.ListTables(q.r.Context(), &tablestore.ListTablesOptions{Prefix: name, Top: 1000})
	if err != nil {
		return "", err
	}
	for _, n := range page.Names {
		if strings.EqualFold(n, name) {
			return n, nil
		}
	}
	return "", &tablestore.Error{Code: notFound, Message: "table " + name + " not found"}
}

func (q *request) getTable() error {
	l, err := q.metadataLevel()
	if err != nil {
		return err
	}
	name, err := q.lookupTable(q.res.table, edm.CodeResourceNotFound)
	if err != nil {
		return err
	}
	q.writeJSON(http.StatusOK, l, q.tableElement(l, name))
	return nil
}

func (q *request) createTable() error {
	l, err := q.metadataLevel()
	if err != nil {
		return err
	}
	badBody := apiError(http.StatusBadRequest, edm.CodeInvalidInput, "One of the request inputs is not valid: the body must be a JSON object with TableName.")
	if info, ok := wire.TopMembers(q.body); !ok || info.Members > maxMembers {
		return badBody
	}
	var in map[string]json.RawMessage
	if err := json.Unmarshal(q.body, &in); err != nil {
		return badBody
	}
	var name string
	if raw, ok := in["TableName"]; !ok || len(raw) == 0 || raw[0] != '"' || json.Unmarshal(raw, &name) != nil {
		return apiError(http.StatusBadRequest, edm.CodePropertiesNeedValue, "The values are not specified for all properties in the entity: TableName is required.")
	}
	if _, err := q.h.db.CreateTable(q.r.Context(), name); err != nil {
		return err
	}
	hd := q.w.Header()
	hd.Set("Location", q.res.base+"Tables("+keyLiteral(name)+")")
	if preferNoContent(q.r) {
		hd.Set("Preference-Applied", "return-no-content")
		hd.Set("DataServiceId", q.res.base+"Tables("+keyLiteral(name)+")")
		q.w.WriteHeader(http.StatusNoContent)
		return nil
	}
	if q.r.Header.Get("Prefer") != "" {
		hd.Set("Preference-Applied", "return-content")
	}
	q.writeJSON(http.StatusCreated, l, q.tableElement(l, name))
	return nil
}

func (q *request) deleteTable() error {
	if err := q.h.db.DeleteTable(q.r.Context(), q.res.table); err != nil {
		return err
	}
	q.w.WriteHeader(http.StatusNoContent)
	return nil
}

// preferNoContent reports Prefer: return-no-content.
func preferNoContent(r *http.Request) bool {
	for _, v := range r.Header.Values("Prefer") {
		for _, p := range strings.Split(v, ",") {
			if strings.EqualFold(strings.TrimSpace(p), "return-no-content") {
				return true
			}
		}
	}
	return false
}
