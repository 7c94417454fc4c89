package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"net/http"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/tablestore/tablestore"
	"github.com/tablestore/tablestore/server"
)

// logLevels are the --log-level values of serve.
var logLevels = map[string]slog.Level{
	"debug": slog.LevelDebug, "info": slog.LevelInfo, "warn": slog.LevelWarn, "error": slog.LevelError,
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
given, which makes a new store there when it holds none (and says so). By default it serves the development account
devstoreaccount1 with Azure's well-known key, so an SDK's development
connection string works; --account and --key (repeatable, up to two, in
base64) set others, and --anonymous turns authentication off (for local
development only). It prints the connection string to use.

Each request is logged on standard error as one line at level info (with
--log-level info or debug; warn and error show only failures, none
nothing). SIGINT or SIGTERM stops it gracefully: it stops accepting
connections, lets requests in flight finish (up to --shutdown-timeout),
then closes the store cleanly.

Admission: at most --max-requests operations run at once and at most
--max-uploads request bodies arrive at once, apart, so clients that send
slowly hold upload slots only; a body must arrive at --min-body-rate
bytes per second once --body-grace has passed, or it is answered 408.
Credentials and permissions are checked before any body is read.
Request bodies, the work on them and response pages share
--memory-budget (default 4 MiB per --max-requests); a request that finds
no slot or memory within a second is answered 503 ServerBusy with
Retry-After. --memory-limit sets the Go runtime's memory limit (as
GOMEMLIMIT does): by default the budget plus 32 MiB, so the garbage
collector keeps the process near the budget; "off" leaves the runtime's
default (which lets the heap reach twice what is live). A GOMEMLIMIT in
the environment wins over the default. Sizes take a unit: 256MiB, 1GiB,
64KiB, or plain bytes.`,
		example: `tablestore serve --dir data
tablestore serve --dir new-data --create
tablestore serve --in-memory --addr 127.0.0.1:10002 --anonymous --log-level warn`,
		flags: func(fs *flag.FlagSet, io *stdio) func(context.Context, []string) error {
			store := storeFlag(fs)
			dir := fs.String("dir", "", "the store directory (the same as --store)")
			inMemory := fs.Bool("in-memory", false, "serve an empty in-memory store, gone when the server stops")
			create := fs.Bool("create", false, "make a new store in --dir if it holds none")
			addr := fs.String("addr", "127.0.0.1:10002", "the address to listen on")
			account := fs.String("account", server.DevAccount, "the storage account name clients address")
			var keys stringList
			fs.Var(&keys, "key", "an account key in base64, repeatable (default: the development key)")
			anonymous := fs.Bool("anonymous", false, "accept every request without authentication (local development only)")
			level := fs.String("log-level", "info", "debug, info, warn, error or none")
			shutdown := fs.Duration("shutdown-timeout", 30*time.Second, "how long requests in flight may take to finish on SIGINT/SIGTERM")
			maxRequests := fs.Int("max-requests", server.DefaultMaxConcurrentRequests, "operations served at once")
			maxUploads := fs.Int("max-uploads", 0, "request bodies received at once (default twice --max-requests)")
			budget := byteSize(0)
			fs.Var(&budget, "memory-budget", "memory for request bodies, their work and response pages (default 4MiB × --max-requests)")
			memLimit := fs.String("memory-limit", "auto", `the Go runtime's memory limit: a size, "auto" (the budget plus 32MiB) or "off"`)
			minRate := byteSize(server.DefaultMinBodyRate)
			fs.Var(&minRate, "min-body-rate", "the slowest a request body may arrive, in bytes per second")
			grace := fs.Duration("body-grace", server.DefaultBodyGracePeriod, "how long a request body may take before --min-body-rate applies")
			return func(ctx context.Context, args []string) (err error) {
				if err := wantArgs(args, 0, 0, "no arguments"); err != nil {
					return err
				}
				switch {
				case *maxRequests <= 0:
					return usagef("--max-requests must be positive")
				case *maxUploads < 0:
					return usagef("--max-uploads must be positive")
				case minRate <= 0:
					return usagef("--min-body-rate must be positive")
				case *grace <= 0:
					return usagef("--body-grace must be positive")
				}
				where := *dir
				if isSet(fs, "store") {
					if where != "" {
						return usagef("give --dir or --store, not both")
					}
					where = *store
				}
				if !*inMemory && where == "" {
					where = *store // $TABLESTORE_STORE
				}
				if *inMemory == (where != "") {
					return usagef("give --dir DIR or --in-memory")
				}
				if *inMemory && *create {
					return usagef("--create is for --dir, not --in-memory")
				}
				var logger *slog.Logger
				if *level != "none" {
					lv, ok := logLevels[*level]
					if !ok {
						return usagef("unknown --log-level %q: want debug, info, warn, error or none", *level)
					}
					logger = slog.New(slog.NewTextHandler(io.stderr, &slog.HandlerOptions{Level: lv}))
				}
				var db *tablestore.DB
				if *inMemory {
					db, err = tablestore.OpenInMemory(nil)
				} else if *create {
					db, err = openOrCreateStore(where, nil, io.stderr, "serve")
				} else {
					db, err = openStore(where, nil)
				}
				if err != nil {
					return err
				}
				defer closeStore(db, &err)
				opts := &server.Options{Account: *account, Keys: keys, Anonymous: *anonymous, Logger: logger,
					MaxConcurrentRequests: *maxRequests, MaxConcurrentUploads: *maxUploads, MemoryBudget: int64(budget),
					MinBodyRate: int(minRate), BodyGracePeriod: *grace}
				limit, err := memoryLimit(*memLimit, opts)
				if err != nil {
					return err
				}
				h, err := server.New(db, opts)
				if err != nil {
					return usagef("%s", errorText(err))
				}
				ln, err := net.Listen("tcp", *addr)
				if err != nil {
					return err
				}
				if limit > 0 {
					debug.SetMemoryLimit(limit)
					fmt.Fprintf(io.stderr, "serve: Go memory limit %s\n", formatBytes(limit))
				}
				return serve(ctx, io.stderr, server.NewHTTPServer(*addr, h), server.NewListener(ln), *account, keys, *anonymous, *shutdown)
			}
		},
	}
}

// memoryLimit is the Go memory limit --memory-limit asks for, 0 to leave
// the runtime's: "auto" is server.RecommendedMemoryLimit unless
// GOMEMLIMIT is set, "off" is none. Errors: a usage error for anything
// else that is not a size.
func memoryLimit(flag string, opts *server.Options) (int64, error) {
	switch flag {
	case "off":
		return 0, nil
	case "auto":
		if os.Getenv("GOMEMLIMIT") != "" {
			return 0, nil
		}
		return server.RecommendedMemoryLimit(opts), nil
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

// serve runs srv on ln until ctx ends, then shuts it down gracefully:
// no new connections, requests in flight finish within timeout.
func serve(ctx context.Context, w io.Writer, srv *http.Server, ln net.Listener, account string, keys []string,
	anonymous bool, timeout time.Duration) error {
	endpoint := fmt.Sprintf("http://%s/%s", ln.Addr(), account)
	key := server.DevKey
	switch {
	case anonymous:
		key = "(any; authentication is off)"
	case len(keys) > 0:
		key = "<your key>"
	}
	fmt.Fprintf(w, "serve: listening on %s\nserve: connection string: DefaultEndpointsProtocol=http;AccountName=%s;AccountKey=%s;TableEndpoint=%s\n",
		ln.Addr(), account, key, endpoint)
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
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
