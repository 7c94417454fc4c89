package server

import (
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/tablestore/tablestore"
	"github.com/tablestore/tablestore/edm"
)

// secondarySuffix names an account's read-only secondary endpoint
// (ACCOUNT-secondary), which the SDKs use for Get Table Service Stats.
const secondarySuffix = "-secondary"

var errSecondaryReadOnly = apiError(http.StatusForbidden, edm.CodeAuthorizationFailure,
	"This request is not authorized to perform this operation: the secondary endpoint is read-only.")

// checkSecondary reports whether r is addressed to the account's
// secondary endpoint, path-style (/ACCOUNT-secondary/...) or host-style
// (ACCOUNT-secondary.host), and refuses every request there but GET and
// HEAD. The secondary serves the primary's data: this server has one
// copy, always in sync.
func (h *handler) checkSecondary(r *http.Request, rawPath string) (secondary bool, err error) {
	seg, _, _ := strings.Cut(strings.TrimPrefix(rawPath, "/"), "/")
	hostname, _, _ := strings.Cut(r.Host, ":")
	if seg != h.account+secondarySuffix && !strings.HasPrefix(strings.ToLower(hostname), h.account+secondarySuffix+".") {
		return false, nil
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		return true, errSecondaryReadOnly
	}
	return true, nil
}

// Account is one storage account served by NewAccounts: its name, its
// keys (base64, at most two), its own store, and its own bearer token
// settings.
type Account struct {
	Name string
	Keys []string
	DB   *tablestore.DB
	// Bearer, if set, is the account's bearer token configuration: the
	// keys, issuers and audiences it accepts and the roles of principals
	// on this account. Default: Options.Bearer.
	Bearer *Bearer
}

// NewAccounts returns a handler serving several accounts, each with its
// own keys and its own store, fully isolated: a request is routed to one
// account by the first path segment (path-style, /ACCOUNT/...) or the
// host name (host-style, ACCOUNT.host), each also with -secondary for the
// read-only secondary endpoint, and that account's handler alone
// authenticates it, with that account's keys and name in every
// signature, and serves it from that account's store. A request naming
// no configured account goes to the first account, as host-style
// addressing of a single server would (it then fails there unless it is
// meant for it). opts applies to every account (its Account and Keys
// fields are ignored, and its Bearer is the default of Account.Bearer);
// MaxConcurrentRequests bounds each account separately, so one account's
// load cannot starve another.
//
// Bearer tokens are isolated too. With more than one account, a token's
// roles claim grants its role only when the token's audience names the
// addressed account: its endpoint under Options.PublicEndpoints, or an
// audience of a Bearer that serves this account alone. A token for the
// generic StorageAudience takes its role from the account's
// Bearer.Principals only, as Azure takes it from the role assignments
// on the account; a principal with no role there is answered 403
// AuthorizationPermissionMismatch. A Bearer given to several accounts
// (Options.Bearer for all, or the same *Bearer twice) may not have
// Principals: roles are given per account. Errors: no accounts, a
// repeated name, Principals on a shared Bearer, and New's errors.
func NewAccounts(accounts []Account, opts *Options) (http.Handler, error) {
	if len(accounts) == 0 {
		return nil, errors.New("tablestore: server: no accounts")
	}
	bearerOf := func(a Account) *Bearer {
		if a.Bearer != nil || opts == nil {
			return a.Bearer
		}
		return opts.Bearer
	}
	uses := map[*Bearer]int{}
	for _, a := range accounts {
		if b := bearerOf(a); b != nil {
			uses[b]++
		}
	}
	m := &multiAccount{byName: map[string]*handler{}}
	for _, a := range accounts {
		var o Options
		if opts != nil {
			o = *opts
		}
		o.Account, o.Keys, o.Bearer = a.Name, a.Keys, bearerOf(a)
		shared := o.Bearer != nil && uses[o.Bearer] > 1
		if shared && len(o.Bearer.Principals) > 0 {
			return nil, fmt.Errorf("tablestore: server: account %q shares a bearer configuration with Principals with other accounts: give each account its own (Account.Bearer)", a.Name)
		}
		if a.Name == "" {
			return nil, errors.New("tablestore: server: an account has no name")
		}
		if _, dup := m.byName[a.Name]; dup {
			return nil, fmt.Errorf("tablestore: server: account %q given twice", a.Name)
		}
		h, err := New(a.DB, &o)
		if err != nil {
			return nil, err
		}
		h.(*handler).bearerScoped = len(accounts) > 1
		h.(*handler).bearerShared = shared
		m.byName[a.Name] = h.(*handler)
		if m.first == nil {
			m.first = h.(*handler)
		}
	}
	return m, nil
}

// multiAccount routes requests to per-account handlers.
type multiAccount struct {
	byName map[string]*handler
	first  *handler
}

func (m *multiAccount) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	m.pick(r).ServeHTTP(w, r)
}

// pick chooses the account a request addresses.
func (m *multiAccount) pick(r *http.Request) *handler {
	raw := requestPath(r)
	seg, _, _ := strings.Cut(strings.TrimPrefix(raw, "/"), "/")
	if h := m.byName[strings.TrimSuffix(seg, secondarySuffix)]; h != nil {
		return h
	}
	hostname, _, _ := strings.Cut(r.Host, ":")
	label, _, found := strings.Cut(strings.ToLower(hostname), ".")
	if found {
		if h := m.byName[strings.TrimSuffix(label, secondarySuffix)]; h != nil {
			return h
		}
	}
	return m.first
}
