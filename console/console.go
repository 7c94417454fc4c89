// Package console serves tablestore's web console: an http.Handler over
// one *tablestore.DB that lists tables with their estimated sizes and
// secondary indexes, runs queries with their plans drawn, pages through
// results in a typed grid with what each page examined, exports them, edits
// entities with typed inputs, imports JSON lines or CSV files, sets a
// table's time to live and change feed, tails the feed live and shows the
// store's health, in any browser, with nothing to install. The pages are Go html/template; the script and style sheet are
// embedded; nothing is loaded from another origin.
//
//	db, _ := tablestore.Open(dir, nil)
//	c, _ := console.New(db, nil) // a random access token
//	ln, _ := net.Listen("tcp", "127.0.0.1:10008")
//	fmt.Println("open", c.StartURL(ln.Addr().String()))
//	err := http.Serve(ln, c)
//
// # Access
//
// The console gives whoever uses it the power to read and change the whole
// store, so every request needs a session, and a session starts only from
// the access token: a visit to any page with ?token=TOKEN (the URL StartURL
// returns) sets a session cookie (HttpOnly, SameSite=Strict) and redirects
// to the same page without the token. Without a session, pages answer 401.
//
// When Options.Accounts is set, a session must also sign in as one of the
// accounts with one of its keys before it sees anything; it then acts on that
// account's store only, with the rights the key gives on Azure's protocol
// (a key is full control of its account). The console checks the key
// itself: shared access signatures, stored access policies and other
// credentials cannot sign in, because the console cannot keep to their
// narrower rights.
//
// Requests that change anything (every POST) must carry the session's CSRF
// token (a form field, or the X-CSRF-Token header), and are refused when the
// browser says they come from another site: an Origin other than the
// console's own, or Sec-Fetch-Site other than same-origin. GET requests never
// change anything. The Host header must name a loopback or IP address,
// localhost, or one of Options.Hosts, which defeats DNS rebinding. Every
// response forbids framing and carries a Content-Security-Policy that allows
// the console's own script and style only.
//
// # Scale
//
// No page reads a whole table: the table list shows estimates from
// Table.Stats (marked as such), queries read one page of at most Top entities
// and continue with the page's continuation token, exports and imports
// stream page by page or chunk by chunk, and a change stream carries at
// most 1,000 changes before it pauses for the user to continue.
//
// A live change stream (server-sent events) lasts 30 seconds at most,
// after which the browser reconnects from the last change it received;
// call Shutdown when the server shuts down, so it need not wait for them.
//
// # Memory
//
// What the console holds between requests is bounded and counted: at most
// 4 live change streams per session and 32 in all (beyond them a stream is
// refused, 429 for the session's bound, 503 with Retry-After for the
// console's), and at most 4 imports per session and 16 in all, an import
// ending after 2 minutes without a chunk. With several Accounts, each
// account's sessions together take at most an even share of the overall
// bounds (32 and 16 split between the accounts, at least one each), so
// one account's key holders cannot starve another's. With Options.Memory or
// Options.AccountMemory, each stream reserves 128 KiB of the session's budget
// while it is open, and each import what its chunk needs while it is taken
// (about twice the chunk and its unfinished record, plus the transaction's
// work) and its unfinished record between chunks; when the budget has no
// room, the stream or the chunk is refused with 503 and Retry-After.
//
// A Console is safe for concurrent use.
package console

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/tablestore/tablestore"
	"github.com/tablestore/tablestore/server"
	"github.com/tablestore/tablestore/server/webguard"
)

// ErrBadOptions is matched by New's error when Options break their rules.
var ErrBadOptions = errors.New("console: bad options")

// account is a storage account a console session may sign in as (one of
// Options.Accounts) and its memory budget: the change streams and
// imports of sessions signed in as it reserve what they hold from it.
type account struct {
	server.Account
	Memory Memory // nil: none
}

// Memory is a memory budget the console reserves the buffers of its change
// streams and imports from, such as the REST server's budget for the same
// account (*server.Memory, from server.AccountMemory), so that both count
// against one limit. Implementations must be safe for concurrent use.
type Memory interface {
	// Reserve reserves n bytes, waiting a bounded time for them. It
	// returns false, holding nothing, when they do not come free in time,
	// ctx ends, or n is more than the budget could ever grant.
	Reserve(ctx context.Context, n int64) bool
	// Release returns n bytes reserved before, in one part or several.
	Release(n int64)
}

// Options configure a Console. A nil *Options, and every zero field, means
// the default given in the field's comment.
type Options struct {
	// Token is the access token a session starts from: 16 to 128
	// characters of A-Z, a-z, 0-9, '-' and '_'. Default: 43 random
	// characters (256 bits) chosen by New.
	Token string

	// Accounts, when set, makes every session sign in as one of them with
	// one of its keys (as the REST server's accounts have them, base64),
	// and act on that account's store only; an account's nil DB means the
	// store given to New, and its Bearer is not used. Default nil: no
	// sign-in; the token alone gives access to the store given to New.
	Accounts []server.Account

	// AccountMemory, when set, gives the memory budget of an account of
	// Accounts, such as the REST server's budget for it
	// (server.AccountMemory of the handler serving the accounts). An
	// account it gives none (nil) has Options.Memory when its DB is nil,
	// else none. Default nil: as if it gave none.
	AccountMemory func(account string) Memory

	// Metrics serves Prometheus metrics in the text exposition format,
	// such as the REST server's metrics handler. The Health page charts
	// requests per second and latency from its tablestore_requests_total
	// counter and tablestore_request_duration_seconds histogram (only the
	// signed-in account's series when sessions sign in). Default nil: the
	// Health page shows the store's state without charts.
	Metrics http.Handler

	// Memory is the memory budget of the store given to New (see
	// AccountMemory for the accounts'). Default nil: the console's
	// streams and imports are bounded in number only.
	Memory Memory

	// Hosts are host names, besides IP addresses and localhost, that
	// requests may name in their Host header: the names the console is
	// reached by. Default nil.
	Hosts []string

	// Prefix is the path the console is mounted at, such as "/console"
	// when it shares a listener with other handlers: requests outside it
	// are 404, and every link and cookie carries it. It must start with
	// '/' and not end with one. Default "": the root.
	Prefix string

	// SessionTTL is how long a session lasts without a request. Default
	// 12 hours.
	SessionTTL time.Duration

	// MaxSessions bounds the sessions kept; starting one more ends the one
	// idle longest. Default 64.
	MaxSessions int

	// StoreName names the store, such as its directory, in the header of
	// every page a session sees once signed in (any session's pages when
	// Accounts is nil); never before. Default "".
	StoreName string

	// Logger receives one line per change made through the console
	// (action, table, keys, account) at level Info, and sign-in failures
	// at level Warn. Default nil: no logging.
	Logger *slog.Logger

	// Clock returns the current time, for session expiry. Default
	// time.Now.
	Clock func() time.Time
}

// Console is the web console's http.Handler. See the package comment.
type Console struct {
	db       *tablestore.DB
	o        Options
	accounts []account // Options.Accounts, checked, with their budgets
	token    string
	sessions *sessionStore
	mux      *http.ServeMux
	pages    *pageSet
	healthOf func(*tablestore.DB) error // tests: a store's fault state
	builds   buildLog                   // the outcomes of index builds

	// Change streams: their bounds (tests shorten them) and the channel
	// Shutdown closes to end them.
	streamLife   time.Duration
	streamTick   time.Duration // keep-alives and session checks
	streamMax    int
	stopped      chan struct{}
	shutdownOnce sync.Once

	// The streams open and the imports kept, across sessions (see
	// limits.go); tests lower their bounds.
	liveMu            sync.Mutex
	streams           int
	maxStreams        int
	streamsPerSession int
	imports           map[string]*importJob
	maxImports        int
	// accountStreams and accountImports count them by account (its name;
	// "" without Accounts): each account takes its share of the bounds
	// only (accountShare), so one cannot starve another's sessions.
	accountStreams map[string]int
	accountImports map[string]int
}

var tokenPattern = regexp.MustCompile(`^[A-Za-z0-9_-]{16,128}$`)

// New returns a console over db. Errors (matching ErrBadOptions): a nil db
// without Accounts, a malformed Token or Prefix, an account without a name
// or keys, or two accounts of one name.
func New(db *tablestore.DB, opts *Options) (*Console, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s", ErrBadOptions, fmt.Sprintf(format, args...))
	}
	if o.Token == "" {
		o.Token = randomToken()
	} else if !tokenPattern.MatchString(o.Token) {
		return nil, bad("the token must be 16 to 128 characters of A-Z, a-z, 0-9, '-' and '_'")
	}
	if o.Prefix != "" && (!strings.HasPrefix(o.Prefix, "/") || strings.HasSuffix(o.Prefix, "/") ||
		strings.ContainsAny(o.Prefix, "?#%\"'<> ")) {
		return nil, bad("the prefix %q must start with '/', not end with one, and hold no ?, #, %%, quotes, <, > or spaces", o.Prefix)
	}
	seen := map[string]bool{}
	accounts := make([]account, len(o.Accounts))
	for i := range o.Accounts {
		a := &accounts[i]
		a.Account = o.Accounts[i]
		if o.AccountMemory != nil {
			a.Memory = o.AccountMemory(a.Name)
		}
		if a.Name == "" {
			return nil, bad("account %d has no name", i)
		}
		if seen[a.Name] {
			return nil, bad("account %q is given twice", a.Name)
		}
		seen[a.Name] = true
		if len(a.Keys) == 0 {
			return nil, bad("account %q has no keys", a.Name)
		}
		for _, k := range a.Keys {
			if k == "" {
				return nil, bad("account %q has an empty key", a.Name)
			}
		}
		if a.DB == nil {
			a.DB = db
			if a.Memory == nil {
				a.Memory = o.Memory
			}
		}
		if a.DB == nil {
			return nil, bad("account %q has no store", a.Name)
		}
	}
	if db == nil && len(accounts) == 0 {
		return nil, bad("no store")
	}
	if o.SessionTTL <= 0 {
		o.SessionTTL = 12 * time.Hour
	}
	if o.MaxSessions <= 0 {
		o.MaxSessions = 64
	}
	if o.Clock == nil {
		o.Clock = time.Now
	}
	pages, err := loadPages()
	if err != nil {
		return nil, err
	}
	c := &Console{db: db, o: o, accounts: accounts, token: o.Token, pages: pages,
		sessions:   newSessionStore(o.SessionTTL, o.MaxSessions, o.Clock),
		streamLife: streamLife, streamTick: streamKeepAlive, streamMax: streamMax, stopped: make(chan struct{}),
		maxStreams: maxStreams, streamsPerSession: maxStreamsPerSession,
		imports: map[string]*importJob{}, maxImports: maxImports,
		accountStreams: map[string]int{}, accountImports: map[string]int{}}
	c.routes()
	return c, nil
}

// Shutdown ends the live change streams of the Changes page, and makes
// any started later end at once, so that an http.Server's Shutdown need not
// wait for them: register it with the server's RegisterOnShutdown. Pages
// and actions are served as before. Shutdown may be called more than once.
func (c *Console) Shutdown() {
	c.shutdownOnce.Do(func() { close(c.stopped) })
}

// Token returns the access token.
func (c *Console) Token() string { return c.token }

// StartURL returns the URL that starts a session, for a listener at addr
// (host:port): http://addr/PREFIX/?token=TOKEN. An unspecified address
// (0.0.0.0 or ::) is written as 127.0.0.1. Give it only to people who may
// use the console.
func (c *Console) StartURL(addr string) string {
	if host, port, err := net.SplitHostPort(addr); err == nil {
		if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
			addr = net.JoinHostPort("127.0.0.1", port)
		}
	}
	return "http://" + addr + c.o.Prefix + "/?token=" + c.token
}

// ServeHTTP serves one request. See the package comment for the rules
// every request goes through.
func (c *Console) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	setSecurityHeaders(w.Header())
	if c.o.Prefix != "" {
		rest, ok := strings.CutPrefix(r.URL.Path, c.o.Prefix)
		if !ok || rest != "" && rest[0] != '/' {
			http.NotFound(w, r)
			return
		}
		if rest == "" {
			http.Redirect(w, r, c.o.Prefix+"/", http.StatusSeeOther)
			return
		}
		r2 := r.Clone(r.Context())
		r2.URL.Path = rest
		r2.URL.RawPath = ""
		r = r2
	}
	if !c.hostAllowed(r.Host) {
		c.plainError(w, http.StatusMisdirectedRequest,
			"this console answers only to loopback or IP addresses, localhost and its configured host names")
		return
	}
	if strings.HasPrefix(r.URL.Path, "/static/") {
		c.mux.ServeHTTP(w, r)
		return
	}
	s, ok := c.authenticate(w, r)
	if !ok {
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		if msg := c.crossSite(w, r, s); msg != "" {
			c.plainError(w, http.StatusForbidden, msg)
			return
		}
	}
	if len(c.accounts) > 0 && s.account() == nil && r.URL.Path != "/signin" {
		if r.Method == http.MethodGet || r.Method == http.MethodHead {
			http.Redirect(w, r, c.o.Prefix+"/signin?then="+urlQueryEscape(localTarget(r.URL.RequestURI())), http.StatusSeeOther)
			return
		}
		c.plainError(w, http.StatusForbidden, "sign in first")
		return
	}
	c.mux.ServeHTTP(w, r.WithContext(withSession(r.Context(), s)))
}

// hostAllowed reports whether a Host header names an IP address,
// localhost or one of Options.Hosts.
func (c *Console) hostAllowed(hostport string) bool {
	return webguard.HostAllowed(hostport, c.o.Hosts)
}

// crossSite returns why an unsafe request is refused as cross-site, or
// "" when it may go on.
func (c *Console) crossSite(w http.ResponseWriter, r *http.Request, s *session) string {
	if why := webguard.CrossSite(r); why != "" {
		return "refused: " + why
	}
	got := r.Header.Get("X-CSRF-Token")
	if got == "" {
		// Only urlencoded forms carry the token as a field; multipart and
		// raw bodies must send the header.
		if ct := r.Header.Get("Content-Type"); strings.HasPrefix(ct, "application/x-www-form-urlencoded") {
			r.Body = http.MaxBytesReader(w, r.Body, maxFormBytes)
			if err := r.ParseForm(); err != nil {
				return "refused: the form cannot be read: " + err.Error()
			}
			got = r.PostForm.Get("csrf")
		}
	}
	if got == "" || subtle.ConstantTimeCompare([]byte(got), []byte(s.csrf)) != 1 {
		return "refused: the request lacks this session's CSRF token (reload the page and try again)"
	}
	return ""
}

// maxFormBytes bounds a urlencoded form: an entity of 1 MiB with its
// binary values in base64 and its names fits.
const maxFormBytes = 8 << 20

// localTarget returns u when it is a path on this console, else "/".
func localTarget(u string) string {
	if !strings.HasPrefix(u, "/") || strings.HasPrefix(u, "//") || strings.HasPrefix(u, "/\\") {
		return "/"
	}
	return u
}

// setSecurityHeaders sets the headers every response carries.
func setSecurityHeaders(h http.Header) {
	h.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "+
		"connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
	h.Set("X-Frame-Options", "DENY")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "same-origin") // "no-referrer" would make browsers send Origin: null
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
	h.Set("Cross-Origin-Resource-Policy", "same-origin")
}

// plainError answers with a short text page, for requests refused before a
// session is known.
func (c *Console) plainError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	fmt.Fprintf(w, "tablestore console: %s\n", msg)
}

// logChange logs one change made through the console.
func (c *Console) logChange(r *http.Request, action string, args ...any) {
	if c.o.Logger == nil {
		return
	}
	s := sessionFrom(r.Context())
	if a := s.account(); a != nil {
		args = append(args, "account", a.Name)
	}
	c.o.Logger.Info("console: "+action, args...)
}
