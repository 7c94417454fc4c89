package main

import (
	"context"
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

// testkitFlags are serve's --testkit and --seed, and the kit they start.
type testkitFlags struct {
	on   *bool
	seed *string
	kit  *tablestoretest.Kit
	ctl  http.Handler
}

// register declares the flags on fs.
func (t *testkitFlags) register(fs *flag.FlagSet) {
	t.on = fs.Bool("testkit", false, "serve the test kit's in-memory store (implies --in-memory) with its controls under /testkit/ on the admin listener (needs a loopback --admin-addr; for tests only)")
	t.seed = fs.String("seed", "", "with --in-memory or --testkit: load DIR/TABLE.jsonl (or .json), JSON lines as export writes them, into table TABLE at start")
}

// check refuses --testkit and --seed where they do not belong; --testkit
// without a store directory sets --in-memory.
func (t *testkitFlags) check(f *serveFlags, where string) error {
	if !*t.on {
		if *t.seed != "" && where != "" {
			return usagef("--seed needs --in-memory or --testkit, not a store directory")
		}
		return nil
	}
	switch {
	case where != "":
		return usagef("--testkit serves its own in-memory store, not --dir")
	case *f.adminAddr == "":
		return usagef("--testkit needs --admin-addr (a loopback address) for its controls")
	case !loopbackHostPort(*f.adminAddr):
		return usagef("--testkit needs a loopback --admin-addr (127.0.0.1:PORT, [::1]:PORT or localhost:PORT), not %q", *f.adminAddr)
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
				return tablestoretest.LoadTable(context.Background(), a.DB, table, r)
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
	if err := seedStore(*t.seed, kit.LoadTable); err != nil {
		return nil, err
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
	mux.Handle(tablestoretest.ControlPrefix+"/", guardControls(t.ctl, hosts))
	mux.Handle("/", ah)
	return mux
}

// guardControls applies the admin listener's guards: a foreign Host is
// answered 421, a cross-site request that changes something 403.
func guardControls(h http.Handler, hosts []string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !webguard.HostAllowed(r.Host, hosts) {
			refuseControl(w, http.StatusMisdirectedRequest, "the admin listener answers only to IP addresses, localhost and its configured host names")
			return
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			if why := webguard.CrossSite(r); why != "" {
				refuseControl(w, http.StatusForbidden, "refused: "+why)
				return
			}
		}
		h.ServeHTTP(w, r)
	})
}

// seedStore loads every file DIR/NAME, DIR/NAME.jsonl or DIR/NAME.json
// (dot files and directories skipped) into table NAME
// with load; "" loads nothing.
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
		table := strings.TrimSuffix(strings.TrimSuffix(name, ".jsonl"), ".json")
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
// error body (AuthorizationFailure).
func refuseControl(w http.ResponseWriter, status int, msg string) {
	code := string(edm.CodeAuthorizationFailure)
	body, _ := json.Marshal(map[string]any{"odata.error": map[string]any{
		"code": code, "message": map[string]string{"lang": "en-US", "value": msg}}})
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("x-ms-error-code", code)
	w.WriteHeader(status)
	_, _ = w.Write(body)
}
