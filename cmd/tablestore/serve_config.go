package main

import (
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"

	"github.com/tablestore/tablestore/server"
)

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
	if err := f.cosmos.apply(fs, f); err != nil {
		return nil, err
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

// logLevels are the --log-level values of serve.
var logLevels = map[string]slog.Level{
	"debug": slog.LevelDebug, "info": slog.LevelInfo, "warn": slog.LevelWarn, "error": slog.LevelError,
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

// isSet reports whether a flag was given on the command line.
func isSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}
