package main

import (
	"bytes"
	"context"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/tablestore/tablestore"
	"github.com/tablestore/tablestore/console"
	"github.com/tablestore/tablestore/replicate"
	"github.com/tablestore/tablestore/server"
)

// logLevels are the --log-level values of serve.
var logLevels = map[string]slog.Level{
	"debug": slog.LevelDebug, "info": slog.LevelInfo, "warn": slog.LevelWarn, "error": slog.LevelError,
}

// serveFlags are serve's flags, declared by declareServeFlags.
type serveFlags struct {
	store, dir     *string
	inMemory       *bool
	create         *bool
	addr           *string
	account        *string
	accountKeys    stringList // --account-key
	accountKeyFile *string
	keyFlag        stringList // --key: the TLS key with --cert, else an account key (old spelling)
	anonymous      *bool
	level          *string
	shutdown       *time.Duration
	cert           *string
	logFormat      *string
	adminAddr      *string
	adminHosts     stringList
	pprof          *bool
	backupDir      *string
	// continuous backup (see docs/backup.md)
	contBackup          *string
	rekeyRewrite        *bool
	contBackupEvery     *time.Duration
	contBackupRetention *time.Duration
	contBackupBgSync    *bool
	accounts            *string
	jwks                *string
	issuers             stringList
	audiences           stringList
	roles               *string
	insecureTokens      *bool
	publicEndpoints     stringList
	// Admission and memory.
	maxRequests, maxUploads *int
	budget, minRate         byteSize
	memLimit                *string
	grace                   *time.Duration
	console                 *bool
	// Replication of the served store.
	replicateTo, replicateState *string
	replicateTables             stringList
	kit                         testkitFlags // --testkit, --seed
}

func serveCommand() *command {
	return &command{
		name:    "serve",
		args:    "",
		summary: "serve a store over Azure's Table REST API",
		help: `serve answers Azure Table Storage's REST API on --addr (default
127.0.0.1:10002, loopback only) over the store in --dir (or --store), or
over an empty in-memory store with --in-memory, so the Azure SDKs work
against it unchanged. The directory must hold a store unless --create is
given, which makes a new store there when it holds none (and says so);
with --accounts the same holds for each account's subdirectory. By
default it serves the development account
devstoreaccount1 with Azure's well-known key, so an SDK's development
connection string works; --account sets another name, and its keys (up
to two, base64) come from --account-key-file (one key a line) or
$TABLESTORE_ACCOUNT_KEY (comma-separated) rather than the command line,
where ps shows them (--account-key works but warns). --anonymous turns
authentication off (for local development only). It prints the
connection string to use.

--cert FILE --key FILE (PEM) serve https; plain http is meant for
loopback. Without --cert, --key is the old spelling of --account-key.

Every flag can also come from the environment: TABLESTORE_ and the
flag's name in capitals, '-' as '_' (TABLESTORE_ADMIN_ADDR for
--admin-addr; a comma-separated list for a repeatable flag). The command
line wins. See docs/server.md for the whole table.

Each request is logged on standard error as one line at level info (with
--log-level info or debug; warn and error show only failures, none
nothing). SIGINT or SIGTERM stops it gracefully: it stops accepting
connections, lets requests in flight finish (up to --shutdown-timeout),
then closes the store.

Admission: at most --max-requests operations run at once and at most
--max-uploads request bodies arrive at once, apart, so clients that send
slowly hold upload slots only; a body must arrive at --min-body-rate
bytes per second once --body-grace has passed, or it is answered 408.
Credentials and permissions are checked before any body is read.
Request bodies, the work on them, response pages and the console's change
streams and imports share --memory-budget (default 4 MiB per
--max-requests, for each account); a
request that finds no slot or memory within a second is answered 503
ServerBusy with Retry-After. --memory-limit sets the Go runtime's memory
limit (as GOMEMLIMIT does): by default the accounts' budgets plus 32 MiB,
so the garbage collector keeps the process near them; "off" leaves the
runtime's default (which lets the heap reach twice what is live). A
GOMEMLIMIT in the environment wins over the default. Sizes take a unit:
256MiB, 1GiB, 64KiB, or plain bytes.

--replicate-to STORE also mirrors the served store's tables (every table
as serve starts, or each --replicate-table) into STORE, live, as
replicate does, with the positions in --replicate-state (default
DIR.replicate.json): clients write through the server while it mirrors.
A replication that fails stops the server; on SIGINT/SIGTERM the mirror
applies the last commits once the requests in flight have finished.

--continuous-backup DIR keeps a continuous backup of the store in DIR: a
base checkpoint at start and every --continuous-backup-base-every, and
every commit since, so restore can recreate the store as it was at any
instant of the last --continuous-backup-retention (see docs/backup.md and
tablestore help restore). A synced write is acknowledged once its backup
record is synced too; with --continuous-backup-background-sync, once the
record is written, the backup syncing it in the background (a power loss
can then leave a hole in the window, which backups list shows). Without
it, serve warns when DIR is on the store's disk, where each synced write
then waits for two disk syncs.

--console also serves the web console under /console/ on the admin
listener (--admin-addr, or ` + defaultConsoleAddr + ` when that is not given) and
prints its URL with its access token. Its sessions sign in as a served
account with one of its keys (with --anonymous and one account, the
token alone lets them in) and act on that account's store; its Health page
charts the server's request metrics. See docs/console.md.`,
		example: `tablestore serve --dir data
tablestore serve --dir new-data --create
tablestore serve --dir data --addr 0.0.0.0:10002 --cert cert.pem --key key.pem --account-key-file keys
tablestore serve --in-memory --addr 127.0.0.1:10002 --anonymous --log-level warn
tablestore serve --dir data --replicate-to "$MIRROR_CONN" --replicate-table Orders`,
		flags: func(fs *flag.FlagSet, io *stdio) func(context.Context, []string) error {
			f := &serveFlags{store: storeFlag(fs)}
			f.dir = fs.String("dir", "", "the store directory (the same as --store)")
			f.inMemory = fs.Bool("in-memory", false, "serve an empty in-memory store, gone when the server stops")
			f.create = fs.Bool("create", false, "make a new store in --dir (each account's, with --accounts) if it holds none")
			f.addr = fs.String("addr", "127.0.0.1:10002", "the address to listen on")
			f.account = fs.String("account", server.DevAccount, "the storage account name clients address")
			fs.Var(&f.accountKeys, "account-key", "an account key in base64, repeatable; visible in ps: prefer --account-key-file or $TABLESTORE_ACCOUNT_KEY (default: the development key)")
			f.accountKeyFile = fs.String("account-key-file", "", "a file holding the account's keys in base64, one a line")
			fs.Var(&f.keyFlag, "key", "with --cert: the PEM private key file for https; without: an account key (old spelling of --account-key)")
			f.cert = fs.String("cert", "", "serve https with this PEM certificate chain file (needs --key)")
			f.anonymous = fs.Bool("anonymous", false, "accept every request without authentication (local development only)")
			f.level = fs.String("log-level", "info", "debug, info, warn, error or none")
			f.shutdown = fs.Duration("shutdown-timeout", 30*time.Second, "how long requests in flight may take to finish on SIGINT/SIGTERM")
			f.logFormat = fs.String("log-format", "text", "text or json: the form of the log lines on standard error")
			f.adminAddr = fs.String("admin-addr", "", "serve the admin endpoints (/metrics, /healthz, /readyz, POST /backup) on this address (default: off)")
			fs.Var(&f.adminHosts, "admin-host", "a host name the admin listener (and the console) answers to, besides IP addresses and localhost, repeatable")
			f.pprof = fs.Bool("pprof", false, "also serve Go's profiler under /debug/pprof/ on the admin address")
			f.accounts = fs.String("accounts", "", "serve the accounts in this file (account:key1[:key2], one a line or ;-separated, as Azurite's $AZURITE_ACCOUNTS, which is read when this is not given; or a JSON array that also gives each account's bearer settings, see docs/server.md), each with its own store under --dir/ACCOUNT")
			f.jwks = fs.String("bearer-jwks", "", "accept Entra ID bearer tokens (over https only) signed by the keys in this JWKS file")
			fs.Var(&f.issuers, "bearer-issuer", "an accepted token issuer (iss), repeatable, such as https://sts.windows.net/TENANT/")
			fs.Var(&f.audiences, "bearer-audience", "an accepted token audience besides https://storage.azure.com and the account endpoint, repeatable")
			f.roles = fs.String("bearer-roles", "", "a JSON file mapping principals (oid or sub) to \"Storage Table Data Reader\" or \"Storage Table Data Contributor\", for tokens without roles")
			fs.Var(&f.publicEndpoints, "public-endpoint", "a service root clients reach the server by (https://host:port), repeatable: a token whose audience is an account's endpoint must name one (default: the listen address and the TLS certificate's DNS names)")
			f.insecureTokens = fs.Bool("insecure-accept-any-bearer-token", false, "accept every bearer token unverified, as a contributor (local development only)")
			f.backupDir = fs.String("backup-dir", "", "where the admin listener's POST /backup?name=NAME writes checkpoints (default: backups off)")
			f.rekeyRewrite = fs.Bool("rekey-rewrite", false, "re-encrypt every file of the served stores under a fresh data key, online, in the background (see rekey --rewrite)")
			f.contBackup = fs.String("continuous-backup", "", "keep a continuous backup in this directory (each account's under DIR/ACCOUNT, with --accounts), restorable to any instant with restore (default: off)")
			f.contBackupEvery = fs.Duration("continuous-backup-base-every", time.Hour, "with --continuous-backup: how often a new base checkpoint is taken")
			f.contBackupRetention = fs.Duration("continuous-backup-retention", 24*time.Hour, "with --continuous-backup: how far back the restorable window reaches")
			f.contBackupBgSync = fs.Bool("continuous-backup-background-sync", false, "with --continuous-backup: a synced write waits for the store's log sync only; the backup's is in the background, so a power loss can leave a hole in the window, which backups list shows and restore refuses")
			f.maxRequests = fs.Int("max-requests", server.DefaultMaxConcurrentRequests, "operations served at once (for each account)")
			f.maxUploads = fs.Int("max-uploads", 0, "request bodies received at once (default twice --max-requests)")
			f.budget = byteSize(0)
			fs.Var(&f.budget, "memory-budget", "memory for request bodies, their work and response pages, for each account (default 4MiB × --max-requests)")
			f.memLimit = fs.String("memory-limit", "auto", `the Go runtime's memory limit: a size, "auto" (the budgets plus 32MiB) or "off"`)
			f.minRate = byteSize(server.DefaultMinBodyRate)
			fs.Var(&f.minRate, "min-body-rate", "the slowest a request body may arrive, in bytes per second")
			f.grace = fs.Duration("body-grace", server.DefaultBodyGracePeriod, "how long a request body may take before --min-body-rate applies")
			f.replicateTo = fs.String("replicate-to", "", "also mirror the store's tables into this store (a connection string or a directory), live, as replicate does")
			fs.Var(&f.replicateTables, "replicate-table", "with --replicate-to: a table to mirror, repeatable (default: every table as serve starts)")
			f.replicateState = fs.String("replicate-state", "", "with --replicate-to: the file that keeps the positions (default DIR.replicate.json)")
			f.kit.register(fs)
			f.console = fs.Bool("console", false, "also serve the web console under /console/ on the admin listener (--admin-addr, "+defaultConsoleAddr+" when not given)")
			return func(ctx context.Context, args []string) error {
				if err := wantArgs(args, 0, 0, "no arguments"); err != nil {
					return err
				}
				return runServe(ctx, fs, f, io)
			}
		},
	}
}

// runServe checks the flags, opens the stores and serves until ctx ends.
func runServe(ctx context.Context, fs *flag.FlagSet, f *serveFlags, io *stdio) (err error) {
	c, err := serveConfigFrom(fs, f, io)
	if err != nil {
		return err
	}
	// Listen before the handler is made: its public endpoints default to
	// the address listened on.
	ln, err := net.Listen("tcp", *f.addr)
	if err != nil {
		return err
	}
	defer ln.Close()
	endpoints := []string(f.publicEndpoints)
	if len(endpoints) == 0 {
		if endpoints, err = defaultPublicEndpoints(ln.Addr(), c.tls); err != nil {
			return err
		}
	}
	served, err := c.openStores(io)
	defer func() {
		for _, a := range served {
			closeStore(a.DB, &err)
		}
	}()
	if err != nil {
		return err
	}
	defer rekeyServed(ctx, io.stderr, served, *f.rekeyRewrite)()
	var metrics *server.Metrics
	if *f.adminAddr != "" {
		metrics = server.NewMetrics()
	}
	defer f.kit.close()
	h, err := c.handler(io, served, endpoints, metrics)
	if err != nil {
		return err
	}
	adminSrv, adminLn, err := c.admin(io, h, served, metrics)
	if err != nil {
		return err
	}
	if adminLn != nil {
		defer adminLn.Close()
	}
	srv, ln, err := c.listener(h, ln)
	if err != nil {
		return err
	}
	for _, line := range exposureWarnings(ln.Addr(), *f.anonymous, *f.insecureTokens, c.tls != nil) {
		c.warn(line)
	}
	info := serveInfo{accounts: served, anonymous: *f.anonymous, tls: c.tls != nil, devKey: len(c.keys) == 0 && !f.multi()}
	if adminSrv != nil {
		paths := "/metrics, /healthz, /readyz, POST /backup"
		if f.kit.ctl != nil {
			paths += ", /testkit/"
			if f.kit.token != "" {
				paths += " with its token"
			}
		}
		fmt.Fprintf(io.stderr, "serve: admin listening on %s (%s)\n", adminLn.Addr(), paths)
		go func() { _ = adminSrv.Serve(adminLn) }()
		defer adminSrv.Close()
	}
	serveFn := func(ctx context.Context) error { return serve(ctx, io.stderr, srv, ln, info, *f.shutdown) }
	if *f.replicateTo == "" {
		return serveFn(ctx)
	}
	state := *f.replicateState
	if state == "" {
		state = filepath.Clean(c.where) + ".replicate.json"
	}
	return serveReplicating(ctx, io, served[0].DB, *f.replicateTo, state, f.replicateTables, *f.shutdown, serveFn)
}

// serveConfig is serve's flags, checked, and what they name: the store,
// the logger, the keys, TLS, bearer settings and the accounts.
type serveConfig struct {
	f        *serveFlags
	where    string // the store (--dir, --store or $TABLESTORE_STORE); empty with --in-memory
	logger   *slog.Logger
	warn     func(string)
	keys     []string  // the account keys given; none: the development key
	tls      *tlsFiles // nil: http
	bearer   *server.Bearer
	accounts []server.Account // without their stores
	// warnedBackupDisk is set once serve has warned that the continuous
	// backup shares the store's disk.
	warnedBackupDisk bool
}

// serveConfigFrom reads the environment into fs, checks the flags and
// loads what they name. Errors: a usage error for flags that do not go
// together, or the error of a file they name.
func serveConfigFrom(fs *flag.FlagSet, f *serveFlags, io *stdio) (*serveConfig, error) {
	if err := flagsFromEnv(fs, os.LookupEnv); err != nil {
		return nil, err
	}
	if *f.console && *f.adminAddr == "" {
		*f.adminAddr = defaultConsoleAddr // the console lives on the admin listener
	}
	c := &serveConfig{f: f, warn: func(msg string) { fmt.Fprintf(io.stderr, "serve: WARNING: %s\n", msg) }}
	var err error
	if c.where, err = f.storeWhere(fs); err != nil {
		return nil, err
	}
	if err := f.checkLimits(); err != nil {
		return nil, err
	}
	if c.logger, err = f.newLogger(io.stderr); err != nil {
		return nil, err
	}
	if err := f.checkCombinations(); err != nil {
		return nil, err
	}
	keys, tlsKey, err := f.keys(c.warn)
	if err != nil {
		return nil, err
	}
	c.keys = keys
	if (*f.cert == "") != (tlsKey == "") {
		return nil, usagef("give --cert and --key together to serve https")
	}
	if *f.cert != "" {
		c.tls = &tlsFiles{cert: *f.cert, key: tlsKey}
	}
	if c.bearer, err = f.bearer(c.tls != nil, c.warn); err != nil {
		return nil, err
	}
	if c.accounts, err = f.accountList(keys); err != nil {
		return nil, err
	}
	if err := accountBearers(c.accounts, c.bearer, c.tls != nil, *f.insecureTokens); err != nil {
		return nil, err
	}
	return c, nil
}

// storeWhere is the store serve opens: --dir, --store or
// $TABLESTORE_STORE; empty with --in-memory.
func (f *serveFlags) storeWhere(fs *flag.FlagSet) (string, error) {
	where := *f.dir
	if isSet(fs, "store") {
		if where != "" {
			return "", usagef("give --dir or --store, not both")
		}
		where = *f.store
	}
	if !*f.inMemory && where == "" {
		where = *f.store // $TABLESTORE_STORE
	}
	if err := f.kit.check(f, where); err != nil {
		return "", err
	}
	if *f.inMemory == (where != "") {
		return "", usagef("give --dir DIR or --in-memory")
	}
	if *f.inMemory && *f.create {
		return "", usagef("--create is for --dir, not --in-memory")
	}
	if *f.inMemory && storeEncryption.Load() != nil {
		return "", usagef("an encryption key is for --dir, not --in-memory (nothing of it is written)")
	}
	return where, nil
}

// checkLimits checks the admission flags.
func (f *serveFlags) checkLimits() error {
	switch {
	case *f.maxRequests <= 0:
		return usagef("--max-requests must be positive")
	case *f.maxUploads < 0:
		return usagef("--max-uploads must be positive")
	case f.minRate <= 0:
		return usagef("--min-body-rate must be positive")
	case *f.grace <= 0:
		return usagef("--body-grace must be positive")
	}
	return nil
}

// newLogger is the logger of --log-level and --log-format, writing to w;
// nil with --log-level none.
func (f *serveFlags) newLogger(w io.Writer) (*slog.Logger, error) {
	if *f.level == "none" {
		return nil, nil
	}
	lv, ok := logLevels[*f.level]
	if !ok {
		return nil, usagef("unknown --log-level %q: want debug, info, warn, error or none", *f.level)
	}
	switch *f.logFormat {
	case "text":
		return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: lv})), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: lv})), nil
	}
	return nil, usagef("unknown --log-format %q: want text or json", *f.logFormat)
}

// checkCombinations checks the flags that need others or exclude them.
func (f *serveFlags) checkCombinations() error {
	switch {
	case *f.adminAddr == "" && (*f.pprof || *f.backupDir != "" || len(f.adminHosts) > 0):
		return usagef("--pprof, --backup-dir and --admin-host need --admin-addr")
	case *f.replicateTo == "" && (len(f.replicateTables) > 0 || *f.replicateState != ""):
		return usagef("--replicate-table and --replicate-state need --replicate-to")
	case *f.replicateTo != "" && (*f.inMemory || f.multi()):
		return usagef("--replicate-to needs one store in --dir (not --in-memory or --accounts)")
	case *f.backupDir != "" && *f.inMemory:
		return usagef("--backup-dir needs a store on disk, not --in-memory")
	}
	return nil
}

// openStores opens each account's store (with --accounts, a
// subdirectory of the store directory each). On error it returns the
// accounts whose stores it opened, for the caller to close.
func (c *serveConfig) openStores(io *stdio) ([]server.Account, error) {
	var served []server.Account
	for _, a := range c.accounts {
		db, err := c.openStore(io, a.Name)
		if err != nil {
			return served, err
		}
		a.DB = db
		served = append(served, a)
	}
	return served, nil
}

// openStore opens the store of account.
func (c *serveConfig) openStore(io *stdio, account string) (*tablestore.DB, error) {
	if *c.f.inMemory {
		if *c.f.contBackup != "" {
			return nil, usagef("--continuous-backup needs a store directory, not --in-memory")
		}
		return tablestore.OpenInMemory(nil)
	}
	dir := c.where
	var opts *tablestore.Options
	if *c.f.contBackup != "" {
		if isRemote(c.where) {
			return nil, usagef("--continuous-backup needs a store directory")
		}
		opts = &tablestore.Options{ContinuousBackup: c.f.continuousBackup(account)}
	}
	if c.f.multi() { // each account's store is a subdirectory
		if isRemote(c.where) {
			return nil, usagef("--accounts needs a store directory")
		}
		dir = filepath.Join(c.where, account)
	}
	var db *tablestore.DB
	var err error
	if *c.f.create {
		db, err = openOrCreateStore(dir, opts, io.stderr, "serve")
	} else {
		db, err = openStoreOr(dir, opts, "add --create to make a new store there")
	}
	if err == nil && opts != nil && !opts.ContinuousBackup.BackgroundSync && !c.warnedBackupDisk && onOneDevice(dir, opts.ContinuousBackup.Dir) {
		c.warnedBackupDisk = true
		c.warn("the continuous backup in " + opts.ContinuousBackup.Dir + " is on the store's disk: every synced write waits for two disk syncs there, one of them the backup's; " +
			"put the backup on another disk, or add --continuous-backup-background-sync (docs/backup.md)")
	}
	return db, err
}

// handler makes the accounts' handler and sets the Go memory limit.
func (c *serveConfig) handler(io *stdio, served []server.Account, endpoints []string, metrics *server.Metrics) (http.Handler, error) {
	f := c.f
	opts := &server.Options{Anonymous: *f.anonymous, Logger: c.logger, Metrics: metrics, Bearer: c.bearer, PublicEndpoints: endpoints,
		MaxConcurrentRequests: *f.maxRequests, MaxConcurrentUploads: *f.maxUploads, MemoryBudget: int64(f.budget),
		MinBodyRate: int(f.minRate), BodyGracePeriod: *f.grace}
	limit, err := memoryLimit(*f.memLimit, opts, len(served))
	if err != nil {
		return nil, err
	}
	h, err := server.NewAccounts(served, opts)
	if err != nil {
		return nil, usagef("%s", errorText(err))
	}
	if h, err = f.kit.handler(h, served, opts); err != nil {
		return nil, err
	}
	if limit > 0 {
		debug.SetMemoryLimit(limit)
		fmt.Fprintf(io.stderr, "serve: Go memory limit %s\n", formatBytes(limit))
	}
	return h, nil
}

// admin makes the admin server, with the console if asked for, and
// listens for it; both nil without --admin-addr. The caller closes the
// listener.
func (c *serveConfig) admin(io *stdio, h http.Handler, served []server.Account, metrics *server.Metrics) (*http.Server, net.Listener, error) {
	f := c.f
	if *f.adminAddr == "" {
		return nil, nil, nil
	}
	stores := map[string]*tablestore.DB{}
	for _, a := range served {
		stores[a.Name] = a.DB
	}
	ah, err := server.NewAdminHandler(server.AdminOptions{Metrics: metrics, Stores: stores,
		Pprof: *f.pprof, BackupDir: *f.backupDir, PerAccountDirs: f.multi(), Logger: c.logger, Hosts: f.adminHosts})
	if err != nil {
		return nil, nil, err
	}
	var webConsole *console.Console
	if *f.console {
		if ah, webConsole, err = mountConsole(io.stderr, ah, h, served, metrics, *f.anonymous, c.where, f.adminHosts, c.logger); err != nil {
			return nil, nil, err
		}
	}
	ah = f.kit.mount(ah, f.adminHosts)
	srv := server.NewHTTPServer(*f.adminAddr, ah)
	srv.WriteTimeout = 0 // a profile or a backup may take long
	ln, err := net.Listen("tcp", *f.adminAddr)
	if err != nil {
		return nil, nil, err
	}
	if webConsole != nil {
		printConsole(io.stderr, webConsole, ln.Addr(), len(served) > 1 || !*f.anonymous)
	}
	if !loopbackAddr(ln.Addr()) {
		what := "has no authentication"
		if f.kit.token != "" {
			what = "has no authentication but on /testkit/ (its token)"
		}
		c.warn("the admin listener " + ln.Addr().String() + " is reachable beyond this machine and " + what + ": keep it on a private network")
	}
	return srv, ln, nil
}

// listener makes the server of h, https with TLS, and wraps ln so that
// net/http's own refusals get Azure's error body (inside TLS when there
// is TLS).
func (c *serveConfig) listener(h http.Handler, ln net.Listener) (*http.Server, net.Listener, error) {
	addr := *c.f.addr
	srv := server.NewHTTPServer(addr, h)
	if c.tls != nil {
		var err error
		if srv, err = server.NewHTTPSServer(addr, h, c.tls.cert, c.tls.key); err != nil {
			return nil, nil, usagef("%s", errorText(err))
		}
	}
	if c.logger != nil {
		srv.ErrorLog = slog.NewLogLogger(c.logger.Handler(), slog.LevelWarn)
	}
	if c.tls != nil {
		return srv, server.NewTLSListener(ln, srv.TLSConfig), nil
	}
	return srv, server.NewListener(ln), nil
}

// serveReplicating runs serveFn while a replicator mirrors src into the
// store to names, following its commits. A replication that fails stops
// the server (gracefully) and is the error returned. Once the server has
// stopped, the replicator applies the last commits (within timeout) and
// saves its positions.
func serveReplicating(ctx context.Context, io *stdio, src *tablestore.DB, to, state string, tables []string,
	timeout time.Duration, serveFn func(context.Context) error) (err error) {
	dst, err := openOrCreateStore(to, nil, io.stderr, "replicate")
	if err != nil {
		return err
	}
	defer closeStore(dst, &err)
	pos, err := loadStateFile(state)
	if err != nil {
		return err
	}
	if len(tables) == 0 { // every table as serve starts, also for the last catching up
		for name, err := range src.TableNames(ctx, "") {
			if err != nil {
				return err
			}
			tables = append(tables, name)
		}
		if len(tables) == 0 {
			fmt.Fprintln(io.stderr, "serve: WARNING: --replicate-to: the store has no table to mirror")
			tables = []string{} // not nil, which would mean every table when the mirror catches up at the end
		}
	}
	rp := newReplicateProgress(io)
	opts := replicate.Options{Tables: tables, Positions: pos, Follow: true, OnProgress: rp.update}
	sctx, stopServe := context.WithCancelCause(ctx)
	defer stopServe(nil)
	rctx, stopRepl := context.WithCancel(context.WithoutCancel(ctx))
	defer stopRepl()
	done := make(chan error, 1)
	go func() {
		err := replicate.Run(rctx, src, dst, opts)
		if err != nil {
			fmt.Fprintf(io.stderr, "serve: replication stopped: %s\n", errorText(err))
			stopServe(err)
		}
		done <- err
	}()
	err = serveFn(sctx)
	stopRepl()
	rerr := <-done
	if rerr == nil {
		// Catch up with the last commits, which no client can add to now.
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), timeout)
		opts.Follow = false
		rerr = replicate.Run(dctx, src, dst, opts)
		cancel()
	}
	rp.finish()
	return errors.Join(err, rerr)
}

// bearer returns the bearer token configuration of the --bearer-* flags,
// nil when none is given. Tokens need https.
func (f *serveFlags) bearer(tls bool, warn func(string)) (*server.Bearer, error) {
	if *f.jwks == "" && !*f.insecureTokens {
		if len(f.issuers) > 0 || len(f.audiences) > 0 || *f.roles != "" {
			return nil, usagef("--bearer-issuer, --bearer-audience and --bearer-roles need --bearer-jwks")
		}
		return nil, nil
	}
	if !tls {
		return nil, usagef("bearer tokens are accepted over https only: give --cert and --key")
	}
	if *f.insecureTokens {
		if *f.jwks != "" {
			return nil, usagef("give --bearer-jwks or --insecure-accept-any-bearer-token, not both")
		}
		warn("--insecure-accept-any-bearer-token: EVERY bearer token is accepted, unverified, as Storage Table Data Contributor; for local development only")
		return &server.Bearer{InsecureAcceptAnyToken: true}, nil
	}
	if len(f.issuers) == 0 {
		return nil, usagef("--bearer-jwks needs at least one --bearer-issuer")
	}
	jwks, err := os.ReadFile(*f.jwks)
	if err != nil {
		return nil, err
	}
	b := &server.Bearer{JWKS: jwks, Issuers: f.issuers, Audiences: f.audiences}
	if *f.roles != "" && f.multi() {
		return nil, usagef("--bearer-roles would give a principal its role on every account: with --accounts, give each account's principals in a JSON accounts file (see docs/server.md)")
	}
	if *f.roles != "" {
		raw, err := os.ReadFile(*f.roles)
		if err != nil {
			return nil, err
		}
		if err := json.Unmarshal(raw, &b.Principals); err != nil {
			return nil, usagef("%s: want a JSON object of principal to role: %v", *f.roles, err)
		}
	}
	return b, nil
}

// continuousBackup is account's continuous backup as the flags set it.
func (f *serveFlags) continuousBackup(account string) *tablestore.ContinuousBackup {
	cb := &tablestore.ContinuousBackup{Dir: *f.contBackup, BaseInterval: *f.contBackupEvery,
		Retention: *f.contBackupRetention, BackgroundSync: *f.contBackupBgSync}
	if f.multi() {
		cb.Dir = filepath.Join(cb.Dir, account)
	}
	return cb
}

// multi reports whether --accounts or $AZURITE_ACCOUNTS names the
// accounts (each then has its own store directory).
func (f *serveFlags) multi() bool {
	return *f.accounts != "" || os.Getenv("AZURITE_ACCOUNTS") != ""
}

// accountList returns the accounts to serve: those of --accounts (a
// file) or $AZURITE_ACCOUNTS, else --account with keys (the
// development key when none).
func (f *serveFlags) accountList(keys []string) ([]server.Account, error) {
	if !f.multi() {
		if len(keys) == 0 {
			keys = []string{server.DevKey}
		}
		return []server.Account{{Name: *f.account, Keys: keys}}, nil
	}
	if len(keys) > 0 || *f.account != server.DevAccount {
		return nil, usagef("give the accounts either with --accounts (or $AZURITE_ACCOUNTS) or with --account and its keys, not both")
	}
	spec, from := os.Getenv("AZURITE_ACCOUNTS"), "$AZURITE_ACCOUNTS"
	if *f.accounts != "" {
		b, err := os.ReadFile(*f.accounts)
		if err != nil {
			return nil, err
		}
		if t := bytes.TrimSpace(b); len(t) > 0 && t[0] == '[' {
			accts, err := parseAccountsJSON(t, filepath.Dir(*f.accounts))
			if err != nil {
				return nil, usagef("%s: %s", *f.accounts, err.Error())
			}
			return accts, nil
		}
		spec, from = string(b), *f.accounts
	}
	accts, err := parseAccounts(spec)
	if err != nil {
		return nil, usagef("%s: %s", from, err.Error())
	}
	return accts, nil
}

// accountJSON is an account of a JSON accounts file.
type accountJSON struct {
	Name   string   `json:"name"`
	Keys   []string `json:"keys"`
	Bearer *struct {
		JWKS       string            `json:"jwks"` // a file, relative to the accounts file's directory
		Issuers    []string          `json:"issuers"`
		Audiences  []string          `json:"audiences"`
		Principals map[string]string `json:"principals"`
	} `json:"bearer"`
}

// parseAccountsJSON reads a JSON accounts file: an array of accounts,
// each with its name, its keys and optionally its own bearer token
// settings, whose JWKS file is read relative to dir. Unknown fields are
// errors.
func parseAccountsJSON(b []byte, dir string) ([]server.Account, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var list []accountJSON
	if err := dec.Decode(&list); err != nil {
		return nil, fmt.Errorf("not a JSON array of accounts: %v", err)
	}
	var out []server.Account
	seen := map[string]bool{}
	for _, aj := range list {
		if aj.Name == "" || seen[aj.Name] {
			return nil, fmt.Errorf("account %q: no name, or given twice", aj.Name)
		}
		seen[aj.Name] = true
		if len(aj.Keys) == 0 || len(aj.Keys) > 2 {
			return nil, fmt.Errorf("account %q: want one or two keys", aj.Name)
		}
		for _, k := range aj.Keys {
			if _, err := base64.StdEncoding.DecodeString(k); err != nil || k == "" {
				return nil, fmt.Errorf("account %q: a key is not base64", aj.Name)
			}
		}
		a := server.Account{Name: aj.Name, Keys: aj.Keys}
		if jb := aj.Bearer; jb != nil {
			a.Bearer = &server.Bearer{Issuers: jb.Issuers, Audiences: jb.Audiences, Principals: jb.Principals}
			if jb.JWKS != "" {
				path := jb.JWKS
				if !filepath.IsAbs(path) {
					path = filepath.Join(dir, path)
				}
				raw, err := os.ReadFile(path)
				if err != nil {
					return nil, fmt.Errorf("account %q: %v", aj.Name, err)
				}
				a.Bearer.JWKS = raw
			}
		}
		out = append(out, a)
	}
	if len(out) == 0 {
		return nil, errors.New("no account")
	}
	return out, nil
}

// accountBearers completes the accounts' own bearer settings with the
// --bearer-* flags' (global, nil without them): a JWKS or issuers an
// account leaves out are the flags', and its audiences too when it gives
// none. Errors: account settings without https, with
// --insecure-accept-any-bearer-token, or without a JWKS or an issuer.
func accountBearers(accounts []server.Account, global *server.Bearer, tls, insecure bool) error {
	for _, a := range accounts {
		b := a.Bearer
		if b == nil {
			continue
		}
		switch {
		case insecure:
			return usagef("account %q: its bearer settings mean nothing with --insecure-accept-any-bearer-token", a.Name)
		case !tls:
			return usagef("account %q: bearer tokens are accepted over https only: give --cert and --key", a.Name)
		}
		if b.JWKS == nil && global != nil {
			b.JWKS = global.JWKS
		}
		if len(b.Issuers) == 0 && global != nil {
			b.Issuers = global.Issuers
		}
		if b.Audiences == nil && global != nil {
			b.Audiences = global.Audiences
		}
		if b.JWKS == nil || len(b.Issuers) == 0 {
			return usagef("account %q: bearer tokens need a JWKS and an issuer (its own, or --bearer-jwks and --bearer-issuer)", a.Name)
		}
	}
	return nil
}

// defaultPublicEndpoints are the service roots clients may reach the
// data listener at by default: its address (127.0.0.1 and localhost
// for an unspecified or loopback one) and, with TLS, each DNS name of
// the certificate (wildcards left out), all with the listener's port.
func defaultPublicEndpoints(addr net.Addr, tlsConf *tlsFiles) ([]string, error) {
	scheme := "http"
	if tlsConf != nil {
		scheme = "https"
	}
	host, port, err := net.SplitHostPort(addr.String())
	if err != nil {
		return nil, err
	}
	hosts := []string{host}
	if ip := net.ParseIP(host); ip != nil && (ip.IsUnspecified() || ip.IsLoopback()) {
		hosts = []string{"127.0.0.1", "localhost"}
	}
	if tlsConf != nil {
		pemBytes, err := os.ReadFile(tlsConf.cert)
		if err != nil {
			return nil, err
		}
		if block, _ := pem.Decode(pemBytes); block != nil && block.Type == "CERTIFICATE" {
			if cert, err := x509.ParseCertificate(block.Bytes); err == nil {
				for _, n := range cert.DNSNames {
					if !strings.HasPrefix(n, "*") {
						hosts = append(hosts, n)
					}
				}
			}
		}
	}
	var out []string
	for _, h := range hosts {
		out = append(out, scheme+"://"+net.JoinHostPort(h, port))
	}
	return out, nil
}

// parseAccounts reads Azurite's AZURITE_ACCOUNTS format,
// account1:key1[:key2];account2:key1[:key2], where newlines may also
// separate accounts and lines starting with # are comments.
func parseAccounts(spec string) ([]server.Account, error) {
	var out []server.Account
	seen := map[string]bool{}
	for _, line := range strings.Split(spec, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "#") {
			continue
		}
		for _, item := range strings.Split(line, ";") {
			if item = strings.TrimSpace(item); item == "" {
				continue
			}
			parts := strings.Split(item, ":")
			if len(parts) < 2 || len(parts) > 3 || parts[0] == "" {
				return nil, fmt.Errorf("want account:key1[:key2], got an entry with %d field(s)", len(parts))
			}
			name := parts[0]
			if seen[name] {
				return nil, fmt.Errorf("account %q given twice", name)
			}
			seen[name] = true
			a := server.Account{Name: name}
			for _, k := range parts[1:] {
				k = strings.TrimSpace(k)
				if _, err := base64.StdEncoding.DecodeString(k); err != nil || k == "" {
					return nil, fmt.Errorf("account %q: a key is not base64", name)
				}
				a.Keys = append(a.Keys, k)
			}
			out = append(out, a)
		}
	}
	if len(out) == 0 {
		return nil, errors.New("no account")
	}
	return out, nil
}

// exposureWarnings are the warnings for a data listener on addr: loud
// for --anonymous or --insecure-accept-any-bearer-token beyond loopback,
// plain for http beyond loopback.
func exposureWarnings(addr net.Addr, anonymous, anyToken, tls bool) []string {
	if loopbackAddr(addr) {
		return nil
	}
	var out []string
	loud := func(flag, without string) {
		out = append(out, "********************************************************************",
			flag+" on "+addr.String()+": ANYONE WHO CAN REACH THIS ADDRESS CAN READ,",
			"CHANGE AND DELETE EVERY TABLE, "+without+". Use it on loopback only.",
			"********************************************************************")
	}
	if anonymous {
		loud("--anonymous", "WITHOUT ANY KEY")
	}
	if anyToken {
		loud("--insecure-accept-any-bearer-token", "WITH ANY BEARER TOKEN")
	}
	if !tls {
		out = append(out, "serving plain http on "+addr.String()+", beyond loopback: keys sign requests but data travels in clear; use --cert and --key")
	}
	return out
}

// dialable is addr as a client can use it: an unspecified address
// (0.0.0.0, ::) becomes 127.0.0.1.
func dialable(addr net.Addr) string {
	if tcp, ok := addr.(*net.TCPAddr); ok && tcp.IP.IsUnspecified() {
		return net.JoinHostPort("127.0.0.1", strconv.Itoa(tcp.Port))
	}
	return addr.String()
}

// loopbackAddr reports whether a listener's address is on loopback only.
func loopbackAddr(a net.Addr) bool {
	tcp, ok := a.(*net.TCPAddr)
	return ok && tcp.IP.IsLoopback()
}

// envName is the environment variable that supplies a flag of serve:
// TABLESTORE_ and the flag's name in capitals with '_' for '-'.
func envName(flagName string) string {
	return "TABLESTORE_" + strings.ToUpper(strings.ReplaceAll(flagName, "-", "_"))
}

// envSkip are the flags whose variables are read elsewhere: --store's
// default is $TABLESTORE_STORE, and $TABLESTORE_ACCOUNT_KEY is kept
// apart from --account-key so that a key from the environment draws no
// command-line warning.
var envSkip = map[string]bool{"store": true, "account-key": true}

// flagsFromEnv sets every flag not given on the command line from its
// environment variable (see envName), when that is set. A repeatable
// flag takes a comma-separated list. Errors: a value the flag refuses,
// naming the variable.
func flagsFromEnv(fs *flag.FlagSet, lookup func(string) (string, bool)) error {
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	var err error
	fs.VisitAll(func(f *flag.Flag) {
		if set[f.Name] || envSkip[f.Name] || err != nil {
			return
		}
		if v, ok := lookup(envName(f.Name)); ok {
			if e := fs.Set(f.Name, v); e != nil {
				err = usagef("$%s: %v", envName(f.Name), e)
			}
		}
	})
	return err
}

// tlsFiles are the PEM files of --cert and --key.
type tlsFiles struct{ cert, key string }

// keys sorts out the account keys (from --account-key-file,
// $TABLESTORE_ACCOUNT_KEY, --account-key and the old --key) and the TLS
// key file. A key given on the command line draws a warning: ps shows it.
func (f *serveFlags) keys(warn func(string)) (accountKeys []string, tlsKey string, err error) {
	if *f.cert != "" {
		if len(f.keyFlag) > 1 {
			return nil, "", usagef("give one --key file with --cert")
		}
		if len(f.keyFlag) == 1 {
			tlsKey = f.keyFlag[0]
		}
	} else if len(f.keyFlag) > 0 {
		warn("--key without --cert is the old spelling of --account-key")
		f.accountKeys = append(f.accountKeys, f.keyFlag...)
	}
	if len(f.accountKeys) > 0 {
		warn("account keys on the command line are visible to every user of this machine (ps); use --account-key-file or $TABLESTORE_ACCOUNT_KEY")
	}
	accountKeys = append(accountKeys, f.accountKeys...)
	if env := os.Getenv("TABLESTORE_ACCOUNT_KEY"); env != "" && len(accountKeys) == 0 {
		for _, k := range strings.Split(env, ",") {
			if k = strings.TrimSpace(k); k != "" {
				accountKeys = append(accountKeys, k)
			}
		}
	}
	if *f.accountKeyFile != "" {
		if len(accountKeys) > 0 {
			return nil, "", usagef("give the account keys in one place: --account-key-file, $TABLESTORE_ACCOUNT_KEY or --account-key")
		}
		b, err := os.ReadFile(*f.accountKeyFile)
		if err != nil {
			return nil, "", err
		}
		for _, line := range strings.Split(string(b), "\n") {
			if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "#") {
				accountKeys = append(accountKeys, line)
			}
		}
		if len(accountKeys) == 0 {
			return nil, "", usagef("%s holds no account key", *f.accountKeyFile)
		}
	}
	for _, k := range accountKeys {
		if _, err := base64.StdEncoding.DecodeString(k); err != nil {
			return nil, "", usagef("an account key is not base64")
		}
	}
	return accountKeys, tlsKey, nil
}

// memoryLimit is the Go memory limit --memory-limit asks for, 0 to leave
// the runtime's: "auto" is server.RecommendedMemoryLimit for accounts
// handlers made with opts (each has its own budget) unless GOMEMLIMIT is
// set, "off" is none. Errors: a usage error for anything else that is
// not a size.
func memoryLimit(flag string, opts *server.Options, accounts int) (int64, error) {
	switch flag {
	case "off":
		return 0, nil
	case "auto":
		if os.Getenv("GOMEMLIMIT") != "" {
			return 0, nil
		}
		budget := opts.MemoryBudget // each further account's, as New's default makes it
		if budget <= 0 {
			budget = server.DefaultMaxBodyBytes * int64(opts.MaxConcurrentRequests)
		}
		return server.RecommendedMemoryLimit(opts) + int64(max(accounts-1, 0))*budget, nil
	}
	var b byteSize
	if err := b.Set(flag); err != nil || b <= 0 {
		return 0, usagef("--memory-limit: want a size, auto or off, not %q", flag)
	}
	return int64(b), nil
}

// byteSize is a flag holding a size in bytes: a number with an optional
// unit B, KiB, MiB, GiB (or KB, MB, GB, also powers of 1024).
type byteSize int64

func (b *byteSize) String() string { return formatBytes(int64(*b)) }

func (b *byteSize) Set(s string) error {
	t := strings.TrimSpace(s)
	mult := int64(1)
	for _, u := range []struct {
		suffix string
		mult   int64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}, {"GB", 1 << 30}, {"MB", 1 << 20}, {"KB", 1 << 10}, {"B", 1}} {
		if rest, ok := strings.CutSuffix(t, u.suffix); ok {
			t, mult = strings.TrimSpace(rest), u.mult
			break
		}
	}
	n, err := strconv.ParseInt(t, 10, 64)
	if err != nil || n < 0 || n > math.MaxInt64/mult {
		return fmt.Errorf("not a size: %q (use bytes or a unit: 64KiB, 256MiB, 1GiB)", s)
	}
	*b = byteSize(n * mult)
	return nil
}

// formatBytes writes n in the largest binary unit that divides it.
func formatBytes(n int64) string {
	for _, u := range []struct {
		name string
		size int64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if n != 0 && n%u.size == 0 {
			return strconv.FormatInt(n/u.size, 10) + u.name
		}
	}
	return strconv.FormatInt(n, 10) + "B"
}

// isSet reports whether a flag was given on the command line.
func isSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// serveInfo is what the startup lines tell.
type serveInfo struct {
	accounts  []server.Account
	anonymous bool
	tls       bool
	devKey    bool // the development key is in use: the connection string can show it
}

// serve runs srv on ln until ctx ends, then shuts it down gracefully:
// no new connections, requests in flight finish within timeout.
func serve(ctx context.Context, w io.Writer, srv *http.Server, ln net.Listener, info serveInfo, timeout time.Duration) error {
	scheme := "http"
	if info.tls {
		scheme = "https"
	}
	fmt.Fprintf(w, "serve: listening on %s\n", ln.Addr())
	for _, a := range info.accounts {
		// Pasteable as is with the development key or --anonymous (which
		// takes any key); a configured key is not printed into logs.
		key := "<key of " + a.Name + ">"
		if info.devKey || info.anonymous {
			key = server.DevKey
		}
		fmt.Fprintf(w, "serve: connection string: DefaultEndpointsProtocol=%s;AccountName=%s;AccountKey=%s;TableEndpoint=%s://%s/%s\n",
			scheme, a.Name, key, scheme, dialable(ln.Addr()), a.Name)
	}
	errc := make(chan error, 1)
	go func() {
		errc <- srv.Serve(ln)
	}()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	fmt.Fprintf(w, "serve: stopping: waiting up to %s for requests in flight\n", timeout)
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), timeout)
	defer cancel()
	err := srv.Shutdown(sctx)
	if serr := <-errc; !errors.Is(serr, http.ErrServerClosed) {
		err = errors.Join(err, serr)
	}
	if err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	fmt.Fprintln(w, "serve: stopped; closing the store")
	return nil
}
