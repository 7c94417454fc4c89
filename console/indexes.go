package console

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/tablestore/tablestore"
)

// buildWait is how long creating an index waits for the build before the
// page shows it building.
const buildWait = 2 * time.Second

// indexForm is the create-index form.
type indexForm struct {
	Name        string
	Properties  string // comma-separated
	Partitioned bool
	Unique      bool
}

// buildOutcome is what the table page reports about the last index change
// made on a table from this console.
type buildOutcome struct {
	notice, err string
	code        tablestore.Code
}

// buildLog keeps the last outcome per table until its page shows it.
type buildLog struct {
	mu sync.Mutex
	m  map[buildKey]buildOutcome
}

type buildKey struct {
	db    *tablestore.DB
	table string // lower case
}

func (l *buildLog) put(db *tablestore.DB, table string, o buildOutcome) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.m == nil {
		l.m = map[buildKey]buildOutcome{}
	}
	l.m[buildKey{db, strings.ToLower(table)}] = o
}

// take returns and forgets a table's outcome.
func (l *buildLog) take(db *tablestore.DB, table string) (buildOutcome, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	k := buildKey{db, strings.ToLower(table)}
	o, ok := l.m[k]
	delete(l.m, k)
	return o, ok
}

// createIndex declares an index and starts its build. The build runs on
// after the request (a build stops, and its index goes, when its context
// ends, so it must not be the request's): the page waits up to buildWait,
// then shows the index building with its progress; the outcome appears on
// the table's page.
func (c *Console) createIndex(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("table")
	db := c.store(r)
	t := db.Table(name)
	f := indexForm{Name: strings.TrimSpace(r.PostFormValue("name")), Properties: r.PostFormValue("properties"),
		Partitioned: r.PostFormValue("partitioned") == "1", Unique: r.PostFormValue("unique") == "1"}
	spec := tablestore.IndexSpec{Name: f.Name, Properties: splitSelect(f.Properties), Partitioned: f.Partitioned, Unique: f.Unique}
	done := make(chan error, 1)
	go func() {
		err := t.CreateIndex(context.WithoutCancel(r.Context()), spec)
		if err == nil {
			c.builds.put(db, name, buildOutcome{notice: fmt.Sprintf("Index %s is ready.", spec.Name)})
		} else {
			c.builds.put(db, name, buildOutcome{err: fmt.Sprintf("index %s: %s", spec.Name, errorText(err)),
				code: tablestore.ErrorCode(err)})
		}
		done <- err
	}()
	c.logChange(r, "create index", "table", name, "index", spec.Name, "properties", f.Properties)
	timer := time.NewTimer(buildWait)
	defer timer.Stop()
	select {
	case err := <-done:
		if err != nil {
			// The form comes back with its fields and the error.
			c.builds.take(db, name)
			c.renderTableWith(w, r, statusOf(err), func(b *tableBody) {
				b.IndexError, b.IndexCode, b.NewIndex = errorText(err), tablestore.ErrorCode(err), f
			})
			return
		}
	case <-timer.C:
		c.builds.put(db, name, buildOutcome{notice: fmt.Sprintf("Index %s is building; reload to follow its progress.", spec.Name)})
	}
	http.Redirect(w, r, c.o.Prefix+"/tables/"+url.PathEscape(name)+"#indexes", http.StatusSeeOther)
}

// dropIndex removes an index.
func (c *Console) dropIndex(w http.ResponseWriter, r *http.Request) {
	name, index := r.PathValue("table"), r.PathValue("index")
	db := c.store(r)
	if err := db.Table(name).DropIndex(r.Context(), index); err != nil {
		c.renderTableWith(w, r, statusOf(err), func(b *tableBody) {
			b.IndexError, b.IndexCode = fmt.Sprintf("index %s: %s", index, errorText(err)), tablestore.ErrorCode(err)
		})
		return
	}
	c.logChange(r, "drop index", "table", name, "index", index)
	c.builds.put(db, name, buildOutcome{notice: fmt.Sprintf("Index %s dropped.", index)})
	http.Redirect(w, r, c.o.Prefix+"/tables/"+url.PathEscape(name)+"#indexes", http.StatusSeeOther)
}
