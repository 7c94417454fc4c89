package server

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/tablestore/tablestore"
	"github.com/tablestore/tablestore/filter"
)

// dispatch runs the operation the route and the method name.
func (q *request) dispatch(method string) {
	switch q.res.kind {
	case kindService:
		q.serviceOp(method)
	case kindTables:
		switch method {
		case http.MethodGet:
			q.listTables()
		case http.MethodPost:
			q.createTable()
		default:
			q.fail(errMethodNotAllowed)
		}
	case kindTable:
		switch method {
		case http.MethodGet:
			q.getTable()
		case http.MethodDelete:
			q.deleteTable()
		default:
			q.fail(errMethodNotAllowed)
		}
	case kindACL:
		switch method {
		case http.MethodGet:
			q.getACL()
		case http.MethodPut:
			q.setACL()
		default:
			q.fail(errMethodNotAllowed)
		}
	case kindBatch:
		if method != http.MethodPost {
			q.fail(errMethodNotAllowed)
			return
		}
		q.batch()
	case kindEntities:
		switch method {
		case http.MethodGet:
			q.queryEntities()
		case http.MethodPost:
			q.insertEntity()
		default:
			q.fail(errMethodNotAllowed)
		}
	case kindEntity:
		switch method {
		case http.MethodGet:
			q.getEntity()
		case http.MethodPut:
			q.writeEntity(tablestore.Replace)
		case "MERGE", http.MethodPatch:
			q.writeEntity(tablestore.Merge)
		case http.MethodDelete:
			q.deleteEntity()
		default:
			q.fail(errMethodNotAllowed)
		}
	default:
		q.fail(errInvalidURI)
	}
}

// filterAPIError maps a filter package error to Azure's answer.
func filterAPIError(err error) error {
	var fe *filter.Error
	if !errors.As(err, &fe) {
		return err
	}
	if fe.Code == filter.CodeNotImplemented {
		return apiError(http.StatusNotImplemented, "NotImplemented", fe.Error())
	}
	return apiError(http.StatusBadRequest, "InvalidInput", fe.Error())
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
		return 0, false, apiError(http.StatusBadRequest, "InvalidInput", "One of the request inputs is not valid: $top must be an integer from 1 to 1000.")
	}
	return n, true, nil
}

// tableName is one table name as filter.Properties, for Query Tables.
type tableName string

func (t tableName) Lookup(name string) (filter.Value, bool) {
	if name != "TableName" {
		return filter.Value{}, false
	}
	return filter.Value{Type: filter.TypeString, Bytes: []byte(t)}, true
}

// listTables serves Query Tables: $filter on TableName, $top and
// NextTableName.
func (q *request) listTables() {
	l, ok := q.authorizedLevel(opListTables)
	if !ok {
		return
	}
	f, err := filter.Compile(q.res.query.Get("$filter"), nil)
	if err != nil {
		q.fail(filterAPIError(err))
		return
	}
	top, given, err := parseTop(q)
	if err != nil {
		q.fail(err)
		return
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
			q.fail(err)
			return
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
	if l != metaNone {
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
}

// appendTable appends one table object at level l.
func (q *request) appendTable(b []byte, l metaLevel, name string) []byte {
	b = append(b, '{')
	if l == metaFull {
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
func (q *request) tableElement(l metaLevel, name string) []byte {
	t := q.appendTable(nil, l, name)
	if l == metaNone {
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

func (q *request) getTable() {
	l, ok := q.authorizedLevel(opListTables)
	if !ok {
		return
	}
	name, err := q.lookupTable(q.res.table, tablestore.CodeResourceNotFound)
	if err != nil {
		q.fail(err)
		return
	}
	q.writeJSON(http.StatusOK, l, q.tableElement(l, name))
}

func (q *request) createTable() {
	l, ok := q.authorizedLevel(opCreateTable)
	if !ok {
		return
	}
	body, err := q.readBody()
	if err != nil {
		q.fail(err)
		return
	}
	var in map[string]any
	if err := json.Unmarshal(body, &in); err != nil {
		q.fail(apiError(http.StatusBadRequest, "InvalidInput", "One of the request inputs is not valid: the body must be a JSON object with TableName."))
		return
	}
	name, ok := in["TableName"].(string)
	if !ok {
		q.fail(apiError(http.StatusBadRequest, "PropertiesNeedValue", "The values are not specified for all properties in the entity: TableName is required."))
		return
	}
	if _, err := q.h.db.CreateTable(q.r.Context(), name); err != nil {
		q.fail(err)
		return
	}
	hd := q.w.Header()
	hd.Set("Location", q.res.base+"Tables("+keyLiteral(name)+")")
	if preferNoContent(q.r) {
		hd.Set("Preference-Applied", "return-no-content")
		hd.Set("DataServiceId", q.res.base+"Tables("+keyLiteral(name)+")")
		q.w.WriteHeader(http.StatusNoContent)
		return
	}
	if q.r.Header.Get("Prefer") != "" {
		hd.Set("Preference-Applied", "return-content")
	}
	q.writeJSON(http.StatusCreated, l, q.tableElement(l, name))
}

func (q *request) deleteTable() {
	if err := q.authorize(opDeleteTable, "", "", ""); err != nil {
		q.fail(err)
		return
	}
	if err := q.h.db.DeleteTable(q.r.Context(), q.res.table); err != nil {
		q.fail(err)
		return
	}
	q.w.WriteHeader(http.StatusNoContent)
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

// authorizedLevel authorizes a table-level operation and reads the
// response's metadata level; on failure it has answered the request and
// returns false.
func (q *request) authorizedLevel(o op) (metaLevel, bool) {
	if err := q.authorize(o, "", "", ""); err != nil {
		q.fail(err)
		return 0, false
	}
	l, err := q.metadataLevel()
	if err != nil {
		q.fail(err)
		return 0, false
	}
	return l, true
}
