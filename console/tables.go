package console

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/tablestore/tablestore"
	"github.com/tablestore/tablestore/edm"
)

// tablesPerPage is how many tables the Tables page lists at once.
const tablesPerPage = 100

// statsTimeout bounds the size estimates of one page of tables.
const statsTimeout = 3 * time.Second

// tableRow is one table of the Tables page.
type tableRow struct {
	Name  string
	Stats *tablestore.TableStats // nil when unavailable
	// StatsError says why the estimates are missing.
	StatsError string
	Features   tableFeatures
}

// tableFeatures are the table settings that other parts of tablestore
// provide: secondary indexes, time to live and the change feed. A
// feature's Available field is false when the store's driver lacks it (a
// remote Azure store); its Error says why it could not be read.
type tableFeatures struct {
	// Indexes are the table's secondary indexes, when the store keeps
	// them (IndexesAvailable).
	Indexes          []indexView
	IndexesAvailable bool
	IndexesError     string
	// TTL is nil when expiry is unavailable or could not be read.
	TTL          *ttlView
	TTLAvailable bool
	TTLError     string
	// Feed is nil when the change feed is unavailable or could not be
	// read.
	Feed          *feedView
	FeedAvailable bool
	FeedError     string
}

// indexView is one index as the pages show it.
type indexView struct {
	Name        string
	Properties  string // comma-separated
	Partitioned bool
	Unique      bool
	Ready       bool
	Done, Total int64 // a build's progress
	// Entries and Bytes estimate the index's size.
	Entries, Bytes int64
}

// readFeatures returns the feature settings of a table; with expired, it
// also counts the entities expired and awaiting the sweeper.
func readFeatures(ctx context.Context, t *tablestore.Table, expired bool) tableFeatures {
	var f tableFeatures
	infos, err := t.Indexes(ctx)
	switch {
	case err == nil:
		f.IndexesAvailable = true
		for _, in := range infos {
			f.Indexes = append(f.Indexes, indexView{Name: in.Name, Properties: strings.Join(in.Properties, ", "),
				Partitioned: in.Partitioned, Unique: in.Unique, Ready: in.State == tablestore.IndexReady,
				Done: in.Done, Total: in.Total, Entries: in.Entries, Bytes: in.Bytes})
		}
	case errors.Is(err, tablestore.ErrNotImplemented):
		// The store's driver keeps no indexes (a remote Azure store).
	default:
		f.IndexesAvailable, f.IndexesError = true, errorText(err)
	}
	readTTL(ctx, t, &f, expired)
	readFeed(ctx, t, &f)
	return f
}

// tablesBody is the data of the Tables page.
type tablesBody struct {
	Tables  []tableRow
	Next    string // continuation of the listing; "" at its end
	Page    int    // 1-based page number, for the heading
	NewName string // the create form's name, kept after an error
	Error   string
	Code    tablestore.Code
	Deleted string // the table just deleted, for a notice
}

func (c *Console) tablesPage(w http.ResponseWriter, r *http.Request) {
	c.renderTables(w, r, http.StatusOK, tablesBody{Deleted: r.FormValue("deleted")})
}

// renderTables lists one page of tables with their estimates.
func (c *Console) renderTables(w http.ResponseWriter, r *http.Request, status int, b tablesBody) {
	db := c.store(r)
	page, err := db.ListTables(r.Context(), &tablestore.ListTablesOptions{Top: tablesPerPage,
		Continuation: r.FormValue("next")})
	if err != nil {
		c.fail(w, r, &pageData{Tab: "tables"}, err, link{"First page of tables", c.o.Prefix + "/tables"})
		return
	}
	b.Next = page.Continuation
	b.Page = atoiDefault(r.FormValue("page"), 1)
	ctx, cancel := context.WithTimeout(r.Context(), statsTimeout)
	defer cancel()
	for _, name := range page.Names {
		row := tableRow{Name: name}
		t := db.Table(name)
		st, err := t.Stats(ctx)
		switch {
		case err == nil:
			row.Stats = st
		case errors.Is(err, tablestore.ErrNotImplemented):
			row.StatsError = "this store cannot estimate"
		default:
			row.StatsError = errorText(err)
		}
		row.Features = readFeatures(ctx, t, false)
		b.Tables = append(b.Tables, row)
	}
	c.render(w, r, status, "tables", &pageData{Title: "Tables", Tab: "tables", Body: b})
}

// createTable creates the table the form names and opens its query page.
func (c *Console) createTable(w http.ResponseWriter, r *http.Request) {
	name := r.PostFormValue("name")
	if _, err := c.store(r).CreateTable(r.Context(), name); err != nil {
		c.renderTables(w, r, statusOf(err), tablesBody{NewName: name, Error: errorText(err),
			Code: tablestore.ErrorCode(err)})
		return
	}
	c.logChange(r, "create table", "table", name)
	http.Redirect(w, r, c.o.Prefix+"/tables/"+name, http.StatusSeeOther)
}

// tableBody is the data of a table's overview page.
type tableBody struct {
	Name       string
	Stats      *tablestore.TableStats
	StatsError string
	Features   tableFeatures
	// IndexNotice and IndexError report the last index change made from
	// this console on the table.
	IndexNotice string
	IndexError  string
	IndexCode   tablestore.Code
	// NewIndex keeps the create form's fields after an error.
	NewIndex indexForm
	// Notice reports a settings change just made.
	Notice string
	// TTLError and FeedError report a settings change that failed; NewTTL
	// and NewFeed keep their forms' fields.
	TTLError  string
	TTLCode   tablestore.Code
	NewTTL    *ttlForm
	FeedError string
	FeedCode  tablestore.Code
	NewFeed   *feedForm
}

// tablePage shows one table: its estimates and its settings.
func (c *Console) tablePage(w http.ResponseWriter, r *http.Request) {
	c.renderTableWith(w, r, http.StatusOK, nil)
}

// mustExist returns nil when table t (named name) exists, its
// TableNotFound error when it does not, or the error of the check.
func mustExist(ctx context.Context, t *tablestore.Table, name string) error {
	ok, err := t.Exists(ctx)
	if err == nil && !ok {
		err = tableNotFound(name)
	}
	return err
}

// requireTable reports whether table t exists; when it does not, or the
// check fails, it has answered with the error page d, which links back
// to the tables.
func (c *Console) requireTable(w http.ResponseWriter, r *http.Request, d *pageData, t *tablestore.Table, name string) bool {
	if err := mustExist(r.Context(), t, name); err != nil {
		c.fail(w, r, d, err, link{"Tables", c.o.Prefix + "/tables"})
		return false
	}
	return true
}

// renderTableWith renders a table's page with status, after edit changes
// its data (nil: none).
func (c *Console) renderTableWith(w http.ResponseWriter, r *http.Request, status int, edit func(*tableBody)) {
	name := r.PathValue("table")
	t := c.store(r).Table(name)
	d := &pageData{Title: name, Table: name, Tab: "overview"}
	if !c.requireTable(w, r, d, t, name) {
		return
	}
	b := tableBody{Name: name}
	ctx, cancel := context.WithTimeout(r.Context(), statsTimeout)
	defer cancel()
	var err error
	if b.Stats, err = t.Stats(ctx); err != nil {
		b.StatsError = errorText(err)
		if errors.Is(err, tablestore.ErrNotImplemented) {
			b.StatsError = "this store cannot estimate its tables' sizes"
		}
	}
	b.Features = readFeatures(ctx, t, true)
	b.Notice = settingsNotices[r.FormValue("notice")]
	if o, ok := c.builds.take(c.store(r), name); ok {
		b.IndexNotice, b.IndexError, b.IndexCode = o.notice, o.err, o.code
	}
	if edit != nil {
		edit(&b)
	}
	d.Body = b
	c.render(w, r, status, "table", d)
}

// deleteTableBody is the data of the delete confirmation page.
type deleteTableBody struct {
	Name  string
	Stats *tablestore.TableStats
	Error string
}

func (c *Console) deleteTablePage(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("table")
	d := &pageData{Title: "Delete " + name, Table: name, Tab: "overview"}
	t := c.store(r).Table(name)
	if !c.requireTable(w, r, d, t, name) {
		return
	}
	b := deleteTableBody{Name: name}
	ctx, cancel := context.WithTimeout(r.Context(), statsTimeout)
	defer cancel()
	b.Stats, _ = t.Stats(ctx)
	d.Body = b
	c.render(w, r, http.StatusOK, "deletetable", d)
}

// deleteTable deletes a table once the form repeats its name exactly.
func (c *Console) deleteTable(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("table")
	if r.PostFormValue("confirm") != name {
		d := &pageData{Title: "Delete " + name, Table: name, Tab: "overview",
			Body: deleteTableBody{Name: name, Error: "type the table's name exactly to confirm"}}
		c.render(w, r, http.StatusBadRequest, "deletetable", d)
		return
	}
	if err := c.store(r).DeleteTable(r.Context(), name); err != nil {
		c.fail(w, r, &pageData{Table: name}, err, link{"Tables", c.o.Prefix + "/tables"})
		return
	}
	c.logChange(r, "delete table", "table", name)
	http.Redirect(w, r, c.o.Prefix+"/tables?deleted="+urlQueryEscape(name), http.StatusSeeOther)
}

// tableNotFound is the error of a table that does not exist.
func tableNotFound(name string) error {
	return &tablestore.Error{Code: edm.CodeTableNotFound, Message: fmt.Sprintf("table %s does not exist", name)}
}
