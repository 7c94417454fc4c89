package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/http"
	"net/http/pprof"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"sync"
	"time"

	"github.com/tablestore/tablestore"
	"github.com/tablestore/tablestore/server/webguard"
)

// AdminOptions configure NewAdminHandler.
type AdminOptions struct {
	// Metrics is served at /metrics. Default nil: /metrics is 404.
	Metrics *Metrics
	// Stores are the served stores by account, for /readyz and /backup.
	Stores map[string]*tablestore.DB
	// Pprof serves net/http/pprof under /debug/pprof/. Default false.
	Pprof bool
	// BackupDir is where POST /backup writes checkpoints. Default "":
	// /backup answers 501.
	BackupDir string
	// PerAccountDirs makes a backup NAME hold one directory per account
	// (BackupDir/NAME/ACCOUNT, the layout serve --accounts reads);
	// otherwise the single store is checkpointed into BackupDir/NAME.
	// Several Stores imply it.
	PerAccountDirs bool
	// Logger receives a line per backup. Default nil.
	Logger *slog.Logger
	// Hosts are host names, besides IP addresses and localhost, that
	// requests may name in their Host header. Default nil.
	Hosts []string
}

// NewAdminHandler returns the handler of the admin listener, which is
// meant for operators only (bind it to loopback or a private network):
//
//   - GET /healthz: 200 while the process serves (liveness); a store
//     whose disk is full is named in the body ("disk_full"), still with
//     200, since a restart would not free space.
//   - GET /readyz: 200 when every store is open and healthy; 503 when a
//     store is closed, has met a fault (corruption) or its disk is full,
//     with a JSON body naming the condition per account.
//   - GET /metrics: Prometheus metrics (Options.Metrics).
//   - POST /backup?name=NAME: a consistent online checkpoint of every
//     store into BackupDir/NAME (see PerAccountDirs), which must not exist;
//     NAME is 1 to 100 letters, digits, '.', '_' or '-', not starting
//     with '.'. 201 with a JSON body naming the directories; 400 for a bad
//     name, 409 when it exists or another backup runs, 501 without
//     BackupDir.
//   - /debug/pprof/: Go's profiler, when Pprof is set.
//
// Every request must name an IP address, localhost or one of Hosts in
// its Host header, else it is answered 421 Misdirected Request (which
// defeats DNS rebinding), and a request other than GET, HEAD or OPTIONS
// that its browser marks as cross-site (Sec-Fetch-Site other than
// same-origin, or a foreign Origin) is answered 403, so a web page cannot
// start a backup or a profile.
func NewAdminHandler(o AdminOptions) (http.Handler, error) {
	if len(o.Stores) == 0 {
		return nil, errors.New("tablestore: server: admin handler without stores")
	}
	a := &admin{o: o}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", a.healthz)
	mux.HandleFunc("GET /readyz", a.readyz)
	if o.Metrics != nil {
		mux.Handle("GET /metrics", o.Metrics.Handler())
	}
	mux.HandleFunc("POST /backup", a.backup)
	if o.Pprof {
		mux.HandleFunc("/debug/pprof/", pprof.Index)
		mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
		mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
		mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
		mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	}
	return guardAdmin(mux, o.Hosts), nil
}

// guardAdmin refuses requests to a foreign Host, and unsafe requests a
// browser sends from another site, before h sees them.
func guardAdmin(h http.Handler, hosts []string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !webguard.HostAllowed(r.Host, hosts) {
			writeAdminJSON(w, http.StatusMisdirectedRequest, map[string]any{
				"error": "the admin listener answers only to loopback or IP addresses, localhost and its configured host names"})
			return
		}
		switch r.Method {
		case http.MethodGet, http.MethodHead, http.MethodOptions:
		default:
			if why := webguard.CrossSite(r); why != "" {
				writeAdminJSON(w, http.StatusForbidden, map[string]any{"error": "refused: " + why})
				return
			}
		}
		h.ServeHTTP(w, r)
	})
}

type admin struct {
	o        AdminOptions
	backupMu sync.Mutex
}

func writeAdminJSON(w http.ResponseWriter, status int, v any) {
	b, _ := json.Marshal(v)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
}

func (a *admin) accounts() []string {
	names := make([]string, 0, len(a.o.Stores))
	for n := range a.o.Stores {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func (a *admin) healthz(w http.ResponseWriter, r *http.Request) {
	body := map[string]any{"status": "ok"}
	full := map[string]string{}
	for _, name := range a.accounts() {
		if err := a.o.Stores[name].Health(); errors.Is(err, tablestore.ErrNoSpace) {
			full[name] = err.Error()
		}
	}
	if len(full) > 0 {
		body["disk_full"] = full
	}
	writeAdminJSON(w, http.StatusOK, body)
}

func (a *admin) readyz(w http.ResponseWriter, r *http.Request) {
	status := http.StatusOK
	report := map[string]string{}
	for _, name := range a.accounts() {
		db := a.o.Stores[name]
		report[name] = "ok"
		if err := db.Health(); errors.Is(err, tablestore.ErrNoSpace) {
			report[name], status = "disk full: "+err.Error(), http.StatusServiceUnavailable
			continue
		} else if err != nil {
			report[name], status = "fault: "+err.Error(), http.StatusServiceUnavailable
			continue
		}
		ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
		_, err := db.ListTables(ctx, &tablestore.ListTablesOptions{Top: 1})
		cancel()
		if err != nil {
			report[name], status = "not ready: "+err.Error(), http.StatusServiceUnavailable
		}
	}
	writeAdminJSON(w, status, map[string]any{"ready": status == http.StatusOK, "accounts": report})
}

var backupName = regexp.MustCompile(`^[A-Za-z0-9_-][A-Za-z0-9._-]{0,99}$`)

func (a *admin) backup(w http.ResponseWriter, r *http.Request) {
	fail := func(status int, msg string) {
		writeAdminJSON(w, status, map[string]any{"error": msg})
	}
	if a.o.BackupDir == "" {
		fail(http.StatusNotImplemented, "no backup directory is configured (--backup-dir)")
		return
	}
	name := r.URL.Query().Get("name")
	if !backupName.MatchString(name) {
		fail(http.StatusBadRequest, "name must be 1 to 100 letters, digits, '.', '_' or '-', not starting with '.'")
		return
	}
	if !a.backupMu.TryLock() {
		fail(http.StatusConflict, "another backup is running")
		return
	}
	defer a.backupMu.Unlock()
	root := filepath.Join(a.o.BackupDir, name)
	if _, err := os.Stat(root); !errors.Is(err, fs.ErrNotExist) {
		fail(http.StatusConflict, fmt.Sprintf("backup %q exists", name))
		return
	}
	perAccount := a.o.PerAccountDirs || len(a.o.Stores) > 1
	if perAccount {
		if err := os.MkdirAll(root, 0o750); err != nil {
			fail(http.StatusInternalServerError, err.Error())
			return
		}
	} else if err := os.MkdirAll(a.o.BackupDir, 0o750); err != nil {
		fail(http.StatusInternalServerError, err.Error())
		return
	}
	start := time.Now()
	dirs := map[string]string{}
	for _, acct := range a.accounts() {
		dir := root
		if perAccount {
			dir = filepath.Join(root, acct)
		}
		if err := a.o.Stores[acct].Checkpoint(r.Context(), dir); err != nil {
			if a.o.Logger != nil {
				a.o.Logger.Error("backup failed", "name", name, "account", acct, "error", err)
			}
			fail(http.StatusInternalServerError, fmt.Sprintf("account %s: %v", acct, err))
			return
		}
		dirs[acct] = dir
	}
	if a.o.Logger != nil {
		a.o.Logger.Info("backup", "name", name, "dir", root, "duration", time.Since(start))
	}
	writeAdminJSON(w, http.StatusCreated, map[string]any{"name": name, "dir": root, "accounts": dirs,
		"duration_seconds": time.Since(start).Seconds()})
}
