package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
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
nothing). With --console it also serves the web console on --console-addr
(default 127.0.0.1:10008) and prints its URL: sessions sign in as the
account with one of its keys (with --anonymous, the URL's token alone lets
them in), and act on the same store. SIGINT or SIGTERM stops it gracefully: it stops accepting
connections, lets requests in flight finish (up to --shutdown-timeout),
then closes the store cleanly.`,
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
			consoleOn := fs.Bool("console", false, "also serve the web console (see 'tablestore console --help') on --console-addr")
			consoleAddr := fs.String("console-addr", defaultConsoleAddr, "the address of the web console, with --console")
			return func(ctx context.Context, args []string) (err error) {
				if err := wantArgs(args, 0, 0, "no arguments"); err != nil {
					return err
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
				h, err := server.New(db, &server.Options{Account: *account, Keys: keys, Anonymous: *anonymous, Logger: logger})
				if err != nil {
					return usagef("%s", errorText(err))
				}
				ln, err := net.Listen("tcp", *addr)
				if err != nil {
					return err
				}
				if *consoleOn {
					stopConsole, err := serveConsole(io.stderr, db, *consoleAddr, where, *account, keys, *anonymous, logger)
					if err != nil {
						ln.Close()
						return err
					}
					defer func() { err = errors.Join(err, stopConsole()) }()
				}
				return serve(ctx, io.stderr, server.NewHTTPServer(*addr, h), ln, *account, keys, *anonymous, *shutdown)
			}
		},
	}
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
