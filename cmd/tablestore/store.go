package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
	"syscall"

	"github.com/tablestore/tablestore"
	"github.com/tablestore/tablestore/azure"
)

// storeEnv names the environment variable that supplies --store.
const storeEnv = "TABLESTORE_STORE"

// storeFlag declares --store on fs.
func storeFlag(fs *flag.FlagSet) *string {
	return fs.String("store", os.Getenv(storeEnv),
		"the store: a directory (created if missing), or an Azure Tables connection string (default $"+storeEnv+")")
}

// isRemote reports whether a store argument is a connection string rather
// than a directory.
func isRemote(store string) bool {
	s := strings.ToLower(store)
	return strings.Contains(s, "tableendpoint=") || strings.Contains(s, "accountname=") ||
		strings.Contains(s, "usedevelopmentstorage=")
}

// openStore opens the store named by a --store argument: a directory
// (created if missing) or a connection string for a remote store. Every
// command opens stores through here. opts applies to local stores.
func openStore(store string, opts *tablestore.Options) (*tablestore.DB, error) {
	if store == "" {
		return nil, usagef("no store: give --store DIR or set $%s", storeEnv)
	}
	if isRemote(store) {
		// The remote driver; of opts only FilterLimits applies there.
		var ro *azure.Options
		if opts != nil {
			ro = &azure.Options{FilterLimits: opts.FilterLimits}
		}
		return azure.Open(store, ro)
	}
	db, err := tablestore.Open(store, opts)
	if err != nil {
		if errors.Is(err, syscall.EAGAIN) || errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("store %s is open in another process (%w)", store, err)
		}
		return nil, err
	}
	return db, nil
}

// openLocalStore is openStore for commands that work only on a local
// directory (backup, stats).
func openLocalStore(store string, opts *tablestore.Options) (*tablestore.DB, error) {
	if isRemote(store) {
		return nil, errors.New("this command works on a local store directory only")
	}
	return openStore(store, opts)
}

// closeStore closes db and joins its error to *errp.
func closeStore(db *tablestore.DB, errp *error) {
	if err := db.Close(); err != nil && *errp == nil {
		*errp = err
	}
}
