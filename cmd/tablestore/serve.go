package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"time"

	"github.com/tablestore/tablestore/server"
)

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
	cosmos                      cosmosFlags  // --cosmos... (serve_cosmos.go)
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
line wins. See docs/server-flags.md for the whole table.

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
			fs.Var(&f.audiences, "bearer-audience", "an accepted token audience besides https://storage.azure.com, Azure Storage's application ID and the account endpoint, repeatable")
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
			f.cosmos.register(fs)
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
	info := serveInfo{accounts: served, anonymous: *f.anonymous, tls: c.tls != nil, devKey: len(c.keys) == 0 && !f.multi(), cosmos: *f.cosmos.on}
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

// serveInfo is what the startup lines tell.
type serveInfo struct {
	accounts  []server.Account
	anonymous bool
	tls       bool
	devKey    bool // the development key is in use: the connection string can show it
	cosmos    bool // --cosmos: the emulator's key and connection string
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
		if info.cosmos {
			if info.devKey || info.anonymous {
				key = server.CosmosDevKey
			}
			printCosmosConnection(w, scheme, a.Name, key, ln.Addr())
			continue
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
