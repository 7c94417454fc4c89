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
	"time"

	"github.com/tablestore/tablestore"
	"github.com/tablestore/tablestore/console"
	"github.com/tablestore/tablestore/server"
)

// consoleTokenEnv names the environment variable that fixes the console's
// access token (so a bookmarked URL survives restarts).
const consoleTokenEnv = "TABLESTORE_CONSOLE_TOKEN"

// defaultConsoleAddr is where the console listens unless told otherwise.
const defaultConsoleAddr = "127.0.0.1:10008"

func consoleCommand() *command {
	return &command{
		name:    "console",
		args:    "",
		summary: "serve the web console over a store",
		help: `console serves a web console over the store on --addr (default ` + defaultConsoleAddr + `,
loopback only) and prints the URL to open: browse tables with their
estimated sizes, run queries and see their plans, page through results,
export them as JSON lines or CSV, view, edit, insert and delete entities,
import files, set a table's time to live and change feed, tail its
changes live, and watch the store's health.

The URL carries an access token: whoever has it controls the store, so
share it only with people who may. Opening it starts a session (a cookie);
the token is then gone from the address bar. A new token is drawn at every
start unless $` + consoleTokenEnv + ` sets one (16 to 128 letters, digits, '-'
and '_'). Changes are protected against cross-site requests.

To serve the console beside the REST API, on the server's admin listener
and with its request metrics, use "tablestore serve --console" instead. SIGINT or SIGTERM stops the console
and closes the store.`,
		example: `tablestore console --store data
tablestore console --store data --addr 127.0.0.1:8080`,
		flags: func(fs *flag.FlagSet, io *stdio) func(context.Context, []string) error {
			store := storeFlag(fs)
			addr := fs.String("addr", defaultConsoleAddr, "the address to listen on")
			return func(ctx context.Context, args []string) (err error) {
				if err := wantArgs(args, 0, 0, "no arguments"); err != nil {
					return err
				}
				db, err := openStore(*store, nil)
				if err != nil {
					return err
				}
				defer closeStore(db, &err)
				stop, err := startConsole(io.stderr, "console", db, consoleSetup{addr: *addr, store: *store})
				if err != nil {
					return err
				}
				<-ctx.Done()
				fmt.Fprintln(io.stderr, "console: stopping")
				return stop()
			}
		},
	}
}

// consoleSetup is how a console is started.
type consoleSetup struct {
	addr   string
	store  string // the --store argument, named in the pages (not a connection string)
	logger *slog.Logger
}

// startConsole listens on setup.addr and serves a console over db in the
// background, printing its URL on w, each line after prefix. The returned function
// stops it, letting requests in flight finish for a few seconds.
func startConsole(w io.Writer, prefix string, db *tablestore.DB, setup consoleSetup) (stop func() error, err error) {
	name := setup.store
	if isRemote(name) {
		name = "remote store" // a connection string holds a key
	}
	token := os.Getenv(consoleTokenEnv)
	c, err := console.New(db, &console.Options{Token: token, StoreName: name, Logger: setup.logger})
	if err != nil {
		if errors.Is(err, console.ErrBadOptions) {
			return nil, usagef("%s (from $%s)", err, consoleTokenEnv)
		}
		return nil, err
	}
	warnWeakToken(w, prefix, token)
	ln, err := net.Listen("tcp", setup.addr)
	if err != nil {
		return nil, fmt.Errorf("console: %w", err)
	}
	srv := &http.Server{Handler: c, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute,
		MaxHeaderBytes: 64 << 10}
	srv.RegisterOnShutdown(c.Shutdown) // live change streams end, so stopping need not wait for them
	fmt.Fprintf(w, "%s: open %s\n", prefix, c.StartURL(ln.Addr().String()))
	if ip, ok := ln.Addr().(*net.TCPAddr); ok && !ip.IP.IsLoopback() {
		fmt.Fprintf(w, "%s: warning: %s is reachable from other machines, and plain HTTP shows the token to the network\n",
			prefix, ln.Addr())
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	return func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		err := srv.Shutdown(ctx)
		if serr := <-errc; !errors.Is(serr, http.ErrServerClosed) {
			err = errors.Join(err, serr)
		}
		if err != nil {
			return fmt.Errorf("console: %w", err)
		}
		return nil
	}, nil
}

// minTokenBits is the strength below which a token given by
// $TABLESTORE_CONSOLE_TOKEN draws a warning.
const minTokenBits = 128

// warnWeakToken writes a warning on w, each line after prefix, when token
// (from $TABLESTORE_CONSOLE_TOKEN; "" when unset) looks guessable.
func warnWeakToken(w io.Writer, prefix, token string) {
	if token == "" {
		return
	}
	if bits := tokenBits(token); bits < minTokenBits {
		fmt.Fprintf(w, "%s: warning: the access token from $%s is weak (about %d bits, want %d or more): "+
			"use 43 random characters of A-Z, a-z, 0-9, '-' and '_' (openssl rand -base64 32 | tr '+/' '-_' | tr -d =), "+
			"or unset it for a random token\n", prefix, consoleTokenEnv, bits, minTokenBits)
	}
}

// tokenBits estimates how many bits of randomness a token holds: its
// length times the smaller of the bits of the character classes it draws
// from and the entropy of its characters' frequencies, and nothing for
// characters that repeat or continue a run of the one before (aaaa, abcd,
// 1234). It is a guess that errs low for short random tokens.
func tokenBits(token string) int {
	if token == "" {
		return 0
	}
	var lower, upper, digit, other bool
	counts := map[rune]int{}
	n := 0
	var prev rune = -1
	for _, r := range token {
		switch {
		case r >= 'a' && r <= 'z':
			lower = true
		case r >= 'A' && r <= 'Z':
			upper = true
		case r >= '0' && r <= '9':
			digit = true
		default:
			other = true
		}
		counts[r]++
		if d := r - prev; d < -1 || d > 1 {
			n++ // runs and repeats add nothing
		}
		prev = r
	}
	pool := 0
	for _, c := range []struct {
		used bool
		size int
	}{{lower, 26}, {upper, 26}, {digit, 10}, {other, 2}} {
		if c.used {
			pool += c.size
		}
	}
	total := float64(len([]rune(token)))
	perChar := math.Log2(float64(pool))
	var h float64
	for _, c := range counts {
		p := float64(c) / total
		h -= p * math.Log2(p)
	}
	return int(float64(n) * min(perChar, h))
}

// mountConsole returns the admin handler ah with the web console under
// /console/, for "serve --console": over the served accounts' stores, each
// session signing in as one of them with one of its keys (with --anonymous
// and a single account, the token alone lets a session in), charting the
// server's metrics, and holding its change streams and imports in the
// memory budget of the account's REST handler (rest, from
// server.NewAccounts). hosts extends the console's Host allow-list.
func mountConsole(stderr io.Writer, ah, rest http.Handler, served []server.Account, metrics *server.Metrics, anonymous bool,
	store string, hosts []string, logger *slog.Logger) (http.Handler, *console.Console, error) {
	if isRemote(store) {
		store = "remote store"
	}
	o := &console.Options{Token: os.Getenv(consoleTokenEnv), Prefix: "/console", StoreName: store, Logger: logger, Hosts: hosts}
	if metrics != nil {
		o.Metrics = metrics.Handler()
	}
	var db *tablestore.DB
	if anonymous && len(served) == 1 {
		db = served[0].DB
		o.Memory = accountMemory(rest, served[0].Name)
	} else {
		o.Accounts = served
		o.AccountMemory = func(account string) console.Memory { return accountMemory(rest, account) }
	}
	c, err := console.New(db, o)
	if err != nil {
		if errors.Is(err, console.ErrBadOptions) {
			return nil, nil, usagef("%s (from $%s)", err, consoleTokenEnv)
		}
		return nil, nil, err
	}
	warnWeakToken(stderr, "serve: console", o.Token)
	mux := http.NewServeMux()
	mux.Handle("/console/", c)
	mux.Handle("/console", c)
	mux.Handle("/", ah)
	return mux, c, nil
}

// accountMemory returns the memory budget of account in the REST handler
// rest, or nil (not a nil *server.Memory) when it has none.
func accountMemory(rest http.Handler, account string) console.Memory {
	if m := server.AccountMemory(rest, account); m != nil {
		return m
	}
	return nil
}

// printConsole prints the URL of the console mounted on the admin
// listener at addr.
func printConsole(w io.Writer, c *console.Console, addr net.Addr, signIn bool) {
	fmt.Fprintf(w, "serve: console: open %s\n", c.StartURL(dialable(addr)))
	if signIn {
		fmt.Fprintf(w, "serve: console: sign in as a served account with one of its keys\n")
	}
}
