package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/tablestore/tablestore/server"
)

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
			keys = []string{f.cosmos.devKey()}
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
