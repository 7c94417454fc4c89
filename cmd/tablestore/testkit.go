package main

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	"github.com/tablestore/tablestore/edm"
	"github.com/tablestore/tablestore/server"
	"github.com/tablestore/tablestore/server/webguard"
	"github.com/tablestore/tablestore/tablestoretest"
)

// testkitFlags are serve's --testkit, --testkit-token-file and --seed,
// and the kit they start.
type testkitFlags struct {
	on        *bool
	seed      *string
	tokenFile *string
	token     string // the controls' bearer token; empty: none
	kit       *tablestoretest.Kit
	ctl       http.Handler
}

// testkitTokenEnv holds the controls' token itself (--testkit-token-file
// names a file holding it).
const testkitTokenEnv = "TABLESTORE_TESTKIT_TOKEN"

// register declares the flags on fs.
func (t *testkitFlags) register(fs *flag.FlagSet) {
	t.on = fs.Bool("testkit", false, "serve the test kit's in-memory store (implies --in-memory) with its controls under /testkit/ on the admin listener (a loopback --admin-addr, or any with a token; for tests only)")
	t.tokenFile = fs.String("testkit-token-file", "", "with --testkit: require the token in this file (or in $"+testkitTokenEnv+") as 'Authorization: Bearer TOKEN' on every /testkit/ request; needed for a non-loopback --admin-addr")
	t.seed = fs.String("seed", "", "with --in-memory or --testkit: load DIR/TABLE.jsonl (.json, .csv) into table TABLE at start: JSON lines as export writes them, Azure's JSON (a query's answer or an array), typed CSV or Storage Explorer's CSV export; POST /testkit/reset returns to it")
}

// check refuses --testkit and --seed where they do not belong; --testkit
// without a store directory sets --in-memory.
func (t *testkitFlags) check(f *serveFlags, where string) error {
	if !*t.on {
		switch {
		case *t.seed != "" && where != "":
			return usagef("--seed needs --in-memory or --testkit, not a store directory")
		case *t.tokenFile != "":
			return usagef("--testkit-token-file needs --testkit")
		}
		return nil
	}
	if err := t.readToken(); err != nil {
		return err
	}
	switch {
	case where != "":
		return usagef("--testkit serves its own in-memory store, not --dir")
	case *f.adminAddr == "":
		return usagef("--testkit needs --admin-addr for its controls")
	case !loopbackHostPort(*f.adminAddr) && t.token == "":
		return usagef("--testkit needs a loopback --admin-addr (127.0.0.1:PORT, [::1]:PORT or localhost:PORT), not %q, unless a token guards the controls (--testkit-token-file or $%s)", *f.adminAddr, testkitTokenEnv)
	case *f.accounts != "" || os.Getenv("AZURITE_ACCOUNTS") != "":
		return usagef("--testkit serves one account, not --accounts")
	case *f.console:
		return usagef("--testkit does not go with --console")
	case *f.replicateTo != "":
		return usagef("--testkit does not go with --replicate-to")
	}
	*f.inMemory = true
	return nil
}

// readToken reads the controls' token from --testkit-token-file or
// $TABLESTORE_TESTKIT_TOKEN (not both); a file's surrounding white space
// is dropped.
func (t *testkitFlags) readToken() error {
	env, inEnv := os.LookupEnv(testkitTokenEnv)
	switch {
	case *t.tokenFile != "" && inEnv:
		return usagef("give the test kit's token in --testkit-token-file or $%s, not both", testkitTokenEnv)
	case *t.tokenFile != "":
		b, err := os.ReadFile(*t.tokenFile)
		if err != nil {
			return usagef("--testkit-token-file: %v", err)
		}
		t.token = strings.TrimSpace(string(b))
	case inEnv:
		t.token = env
	default:
		return nil
	}
	for _, c := range t.token {
		if c <= ' ' || c > '~' {
			return usagef("the test kit's token must be printable ASCII without spaces")
		}
	}
	if t.token == "" {
		return usagef("the test kit's token is empty")
	}
	return nil
}

// loopbackHostPort reports whether a listen address names a loopback
// host (an empty host listens on every interface).
func loopbackHostPort(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// handler seeds the stores (--seed) and, with --testkit, starts the kit
// and returns its handler in place of h; close releases the kit.
func (t *testkitFlags) handler(h http.Handler, served []server.Account, opts *server.Options) (http.Handler, error) {
	if !*t.on {
		for _, a := range served {
			load := func(table string, r io.Reader) error {
				return tablestoretest.Load(context.Background(), a.DB, table, r)
			}
			if err := seedStore(*t.seed, load); err != nil {
				return nil, err
			}
		}
		return h, nil
	}
	o := *opts
	o.Account, o.Keys, o.Bearer = served[0].Name, served[0].Keys, served[0].Bearer
	if o.Bearer == nil {
		o.Bearer = opts.Bearer
	}
	kit, err := tablestoretest.NewKit(&o)
	if err != nil {
		return nil, err
	}
	t.kit, t.ctl = kit, tablestoretest.ControlHandler(kit)
	if *t.seed != "" {
		if err := seedStore(*t.seed, kit.Load); err != nil {
			return nil, err
		}
		// POST /testkit/reset returns to the seed.
		snap, err := kit.Snapshot()
		if err != nil {
			return nil, err
		}
		kit.SetBaseline(snap)
	}
	return kit.Handler(), nil
}

// close closes the kit, if any.
func (t *testkitFlags) close() {
	if t.kit != nil {
		_ = t.kit.Close()
	}
}

// mount adds the controls to the admin handler ah, behind the admin
// listener's guards (Host and cross-site); without --testkit, ah as is.
func (t *testkitFlags) mount(ah http.Handler, hosts []string) http.Handler {
	if t.ctl == nil {
		return ah
	}
	mux := http.NewServeMux()
	mux.Handle(tablestoretest.ControlPrefix+"/", guardControls(t.ctl, hosts, t.token))
	mux.Handle("/", ah)
	return mux
}

// guardControls applies the admin listener's guards: a foreign Host is
// answered 421, a request without the token (when there is one) 401 and
// with another 403, a cross-site request that changes something 403.
func guardControls(h http.Handler, hosts []string, token string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !webguard.HostAllowed(r.Host, hosts) {
			refuseControl(w, http.StatusMisdirectedRequest, string(edm.CodeAuthorizationFailure), "the admin listener answers only to IP addresses, localhost and its configured host names")
			return
		}
		if token != "" {
			got, ok := bearerToken(r)
			if !ok {
				w.Header().Set("WWW-Authenticate", "Bearer")
				refuseControl(w, http.StatusUnauthorized, "NoAuthenticationInformation", "the test controls need 'Authorization: Bearer TOKEN' with the server's test kit token")
				return
			}
			if subtle.ConstantTimeCompare([]byte(got), []byte(token)) != 1 {
				refuseControl(w, http.StatusForbidden, string(edm.CodeAuthenticationFailed), "the bearer token is not the server's test kit token")
				return
			}
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			if why := webguard.CrossSite(r); why != "" {
				refuseControl(w, http.StatusForbidden, string(edm.CodeAuthorizationFailure), "refused: "+why)
				return
			}
		}
		h.ServeHTTP(w, r)
	})
}

// bearerToken is the token of an "Authorization: Bearer TOKEN" header.
func bearerToken(r *http.Request) (string, bool) {
	scheme, tok, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	tok = strings.TrimSpace(tok)
	return tok, tok != ""
}

// seedStore loads with load every file DIR/NAME, DIR/NAME.jsonl,
// DIR/NAME.json or DIR/NAME.csv (dot files and directories skipped) into
// table NAME, in any form tablestoretest.Load reads; "" loads nothing.
func seedStore(dir string, load func(string, io.Reader) error) error {
	if dir == "" {
		return nil
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return usagef("--seed: %v", err)
	}
	n := 0
	for _, e := range entries {
		name := e.Name()
		table := name
		for _, ext := range []string{".jsonl", ".json", ".csv"} {
			table = strings.TrimSuffix(table, ext)
		}
		if e.IsDir() || strings.HasPrefix(name, ".") {
			continue
		}
		f, err := os.Open(filepath.Join(dir, name))
		if err != nil {
			return err
		}
		err = load(table, f)
		_ = f.Close()
		if err != nil {
			return fmt.Errorf("--seed %s: %w", filepath.Join(dir, name), err)
		}
		n++
	}
	if n == 0 {
		return usagef("--seed: %s holds no table files", dir)
	}
	return nil
}

// refuseControl answers a refused control request with Azure's JSON
// error body.
func refuseControl(w http.ResponseWriter, status int, code, msg string) {
	body, _ := json.Marshal(map[string]any{"odata.error": map[string]any{
		"code": code, "message": map[string]string{"lang": "en-US", "value": msg}}})
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("x-ms-error-code", code)
	w.WriteHeader(status)
	_, _ = w.Write(body)
}
