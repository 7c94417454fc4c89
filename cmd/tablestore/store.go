package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
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
		"the store: its directory, or an Azure Tables connection string (default $"+storeEnv+")")
}

// isRemote reports whether a store argument is a connection string rather
// than a directory.
func isRemote(store string) bool {
	s := strings.ToLower(store)
	return strings.Contains(s, "tableendpoint=") || strings.Contains(s, "accountname=") ||
		strings.Contains(s, "usedevelopmentstorage=")
}

// openStore opens the existing store named by a --store argument: a
// directory that must hold a store (a missing or empty one is an error
// naming it, and nothing is created) or a connection string for a
// remote store. opts applies to local stores.
func openStore(store string, opts *tablestore.Options) (*tablestore.DB, error) {
	return openStoreOr(store, opts, "tables create, put, import and copy make a new store")
}

// openStoreOr is openStore with its own advice on making a store.
func openStoreOr(store string, opts *tablestore.Options, advice string) (*tablestore.DB, error) {
	db, err := openExisting(store, opts)
	if errors.Is(err, tablestore.ErrResourceNotFound) {
		return nil, fmt.Errorf("%s (%s)", errorText(err), advice)
	}
	return db, err
}

// openExisting is openStore with the library's error for a directory
// that holds no store.
func openExisting(store string, opts *tablestore.Options) (*tablestore.DB, error) {
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
	o := tablestore.Options{}
	if opts != nil {
		o = *opts
	}
	o.MustExist = true
	return openLocal(store, &o)
}

// openLocal opens the store in directory dir, with the command's
// encryption key if it has one.
func openLocal(dir string, opts *tablestore.Options) (*tablestore.DB, error) {
	return openDir(dir, withEncryption(opts))
}

// openDir opens the store in directory dir with opts as they are.
func openDir(dir string, opts *tablestore.Options) (*tablestore.DB, error) {
	db, err := tablestore.Open(dir, opts)
	if errors.Is(err, syscall.EAGAIN) || errors.Is(err, syscall.EWOULDBLOCK) {
		return nil, inUseError(dir)
	}
	return db, err
}

// inUseError explains a store locked by another process, which may be
// a server: the way in is then through it.
func inUseError(store string) error {
	return fmt.Errorf("store %s is open in another process, which holds its lock.\n"+
		"If that is `tablestore serve`, reach the store through the server: --store with the connection string\n"+
		"serve printed; for a server on the default address and account that is --store \"UseDevelopmentStorage=true\".\n"+
		"Otherwise stop that process first", store)
}

// openOrCreateStore is openStore for the commands that may make a new
// store (tables create, put, import, copy's destination, serve
// --create): a directory that holds no store becomes one, and the
// command says so on w, prefixed with name.
func openOrCreateStore(store string, opts *tablestore.Options, w io.Writer, name string) (*tablestore.DB, error) {
	db, err := openExisting(store, opts)
	if !errors.Is(err, tablestore.ErrResourceNotFound) {
		return db, err
	}
	if db, err = openLocal(store, opts); err != nil {
		return nil, err
	}
	fmt.Fprintf(w, "%s: created a new store in %s\n", name, store)
	return db, nil
}

// openLocalStore is openStore for commands that work only on a local
// directory (backup).
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
