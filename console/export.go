package console

import (
	"bufio"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"time"

	"github.com/tablestore/tablestore"
	"github.com/tablestore/tablestore/edm"
	"github.com/tablestore/tablestore/entitycsv"
)

// exportPageSize is how many entities an export reads per page.
const exportPageSize = 1000

// export streams the entities a query matches as JSON lines or CSV, page
// by page: format=jsonl writes one entity per line in Azure's JSON wire
// format, without the Timestamp and ETag (as the tablestore command's
// export does); format=csv writes the CSV format of package entitycsv,
// its columns found by a first pass over the same query, spreadsheet-safe
// (entitycsv.SpreadsheetSafe: a cell that would run as a formula is
// written after a quote), since a downloaded CSV is most often opened in a
// spreadsheet. A failure after the first
// byte ends the connection without the response's end, so a download
// never looks complete when it is not.
func (c *Console) export(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("table")
	t := c.store(r).Table(name)
	f := parseQueryForm(r)
	f.Top, f.Next = exportPageSize, ""
	format := r.FormValue("format")
	d := &pageData{Title: "Export", Table: name, Tab: "query"}
	if format != "jsonl" && format != "csv" {
		c.fail(w, r, d, &tablestore.Error{Code: edm.CodeInvalidInput,
			Message: fmt.Sprintf("unknown export format %q: want jsonl or csv", format)})
		return
	}
	q := f.query()
	// A missing table or a bad query fails before anything is sent.
	if _, err := t.QueryPage(r.Context(), tablestore.Query{Filter: q.Filter, Select: q.Select, Top: 1, Reverse: q.Reverse}); err != nil {
		c.fail(w, r, d, err, link{"Back to the query", c.entityBase(name) + "/query" + encodeQuery(f.values())})
		return
	}
	var enc *entitycsv.Encoder
	if format == "csv" {
		cols, err := csvColumns(r, t, q)
		if err == nil {
			enc, err = entitycsv.NewEncoder(cols, entitycsv.SpreadsheetSafe())
		}
		if err != nil {
			c.fail(w, r, d, err)
			return
		}
	}
	ext, ctype := ".jsonl", "application/x-ndjson"
	if format == "csv" {
		ext, ctype = ".csv", "text/csv; charset=utf-8"
	}
	w.Header().Set("Content-Type", ctype)
	w.Header().Set("Content-Disposition", `attachment; filename="`+name+ext+`"`)
	w.Header().Set("Cache-Control", "no-store")
	bw := bufio.NewWriterSize(w, 64<<10)
	var line []byte
	if enc != nil {
		line = enc.AppendHeader(line[:0])
		_, _ = bw.Write(line)
	}
	flusher, _ := w.(http.Flusher)
	err := eachPage(r, t, q, func(p *tablestore.Page) error {
		for _, e := range p.Entities {
			var err error
			if enc != nil {
				line, err = enc.AppendEntity(line[:0], e)
			} else {
				e.Timestamp, e.ETag = time.Time{}, ""
				var j []byte
				j, err = e.MarshalJSON()
				line = append(append(line[:0], j...), '\n')
			}
			if err != nil {
				return err
			}
			if _, err := bw.Write(line); err != nil {
				return err
			}
		}
		if err := bw.Flush(); err != nil {
			return err
		}
		if flusher != nil {
			flusher.Flush()
		}
		return nil
	})
	if err == nil {
		err = bw.Flush()
	}
	if err != nil {
		if c.o.Logger != nil {
			c.o.Logger.Warn("console: export failed", "table", name, "error", err)
		}
		abortResponse(w)
	}
}

// eachPage runs fn on every page of q in turn.
func eachPage(r *http.Request, t *tablestore.Table, q tablestore.Query, fn func(*tablestore.Page) error) error {
	for {
		p, err := t.QueryPage(r.Context(), q)
		if err != nil {
			return err
		}
		if err := fn(p); err != nil {
			return err
		}
		if p.Continuation == "" {
			return nil
		}
		q.Continuation = p.Continuation
	}
}

// csvColumns reads the query once, page by page, and returns the CSV
// header that holds every property name and type its entities have.
func csvColumns(r *http.Request, t *tablestore.Table, q tablestore.Query) (entitycsv.Header, error) {
	seen := map[entitycsv.Column]bool{}
	err := eachPage(r, t, q, func(p *tablestore.Page) error {
		for _, e := range p.Entities {
			for name, v := range e.Properties {
				if c, ok := entitycsv.ColumnOf(name, v); ok {
					seen[c] = true
				}
			}
			if len(seen) > entitycsv.MaxColumns-2 {
				return &tablestore.Error{Code: edm.CodeInvalidInput,
					Message: fmt.Sprintf("the entities have more than %d property names and types: export JSON lines instead", entitycsv.MaxColumns-2)}
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return entitycsv.Columns(slices.Collect(maps.Keys(seen))), nil
}

// abortResponse ends a response that has started without finishing it:
// the connection is closed before the final chunk, so the client sees an
// error instead of a complete download. Without a hijackable connection
// (HTTP/2) the response simply ends early.
func abortResponse(w http.ResponseWriter) {
	rc := http.NewResponseController(w)
	if err := rc.Flush(); err != nil && !errors.Is(err, http.ErrNotSupported) {
		return
	}
	conn, _, err := rc.Hijack()
	if err != nil {
		return
	}
	_ = conn.Close()
}
