package console

import (
	"io/fs"
	"net/http"
	"strings"
)

// routes registers every page and action. Paths are relative to
// Options.Prefix. GET never changes anything; every change is a POST, which
// ServeHTTP checks for cross-site use before it gets here.
func (c *Console) routes() {
	mux := http.NewServeMux()
	static, _ := fs.Sub(staticFS, "static")
	files := http.StripPrefix("/static/", http.FileServerFS(static))
	mux.Handle("GET /static/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Files only: a directory is not listed (ServeHTTP serves this
		// path without a session).
		name := strings.TrimPrefix(r.URL.Path, "/static/")
		if st, err := fs.Stat(static, name); name == "" || strings.HasSuffix(name, "/") || err != nil || st.IsDir() {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Cache-Control", "no-cache")
		files.ServeHTTP(w, r)
	}))

	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, c.o.Prefix+"/tables", http.StatusSeeOther)
	})
	mux.HandleFunc("GET /signin", c.signInPage)
	mux.HandleFunc("POST /signin", c.signIn)
	mux.HandleFunc("POST /signout", c.signOut)

	mux.HandleFunc("GET /tables", c.tablesPage)
	mux.HandleFunc("POST /tables", c.createTable)
	mux.HandleFunc("GET /tables/{table}", c.tablePage)
	mux.HandleFunc("GET /tables/{table}/delete", c.deleteTablePage)
	mux.HandleFunc("POST /tables/{table}/delete", c.deleteTable)
	mux.HandleFunc("POST /tables/{table}/indexes", c.createIndex)
	mux.HandleFunc("POST /tables/{table}/indexes/{index}/drop", c.dropIndex)

	mux.HandleFunc("GET /tables/{table}/query", c.queryPage)
	mux.HandleFunc("GET /tables/{table}/plan", c.planAPI)
	mux.HandleFunc("GET /tables/{table}/export", c.export)

	mux.HandleFunc("GET /tables/{table}/entity", c.entityPage)
	mux.HandleFunc("GET /tables/{table}/entity/new", c.newEntityPage)
	mux.HandleFunc("POST /tables/{table}/entity", c.saveEntity)
	mux.HandleFunc("GET /tables/{table}/entity/delete", c.deleteEntityPage)
	mux.HandleFunc("POST /tables/{table}/entity/delete", c.deleteEntity)
	mux.HandleFunc("POST /tables/{table}/entities/delete", c.deleteEntities)

	mux.HandleFunc("GET /tables/{table}/import", c.importPage)
	mux.HandleFunc("POST /tables/{table}/import", c.startImport)
	mux.HandleFunc("POST /tables/{table}/import/{id}", c.importChunk)

	mux.HandleFunc("POST /tables/{table}/ttl", c.setTTL)
	mux.HandleFunc("POST /tables/{table}/changefeed", c.setChangeFeed)
	mux.HandleFunc("POST /tables/{table}/changefeed/disable", c.disableChangeFeed)

	mux.HandleFunc("GET /tables/{table}/changes", c.changesPage)
	mux.HandleFunc("GET /tables/{table}/changes/stream", c.changesStream)

	mux.HandleFunc("GET /health", c.healthPage)
	mux.HandleFunc("GET /health/metrics", c.metricsAPI)

	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		c.render(w, r, http.StatusNotFound, "message", &pageData{Title: "Not found",
			Body: messageBody{Heading: "Not found", Text: "there is no page at " + r.URL.Path,
				Links: []link{{"Tables", c.o.Prefix + "/tables"}}}})
	})
	c.mux = mux
}
