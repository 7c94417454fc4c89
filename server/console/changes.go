package console

import "net/http"

// changesBody is the data of the Changes page.
type changesBody struct {
	Name string
	// Available is false while this build of tablestore has no change
	// feed (Table.Changes); the page then says so.
	Available bool
}

// changesPage shows a table's change feed.
//
// FEATURE HOOK: this build of tablestore has no change feed. When Table
// gains Changes, tail it here: stream the records after a cursor to the
// page (server-sent events from a GET, so no state changes), newest at the
// top, and set Available.
func (c *Console) changesPage(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("table")
	c.render(w, r, http.StatusOK, "changes", &pageData{Title: "Changes of " + name, Table: name, Tab: "changes",
		Body: changesBody{Name: name}})
}
