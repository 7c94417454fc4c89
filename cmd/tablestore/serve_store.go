package main

import (
	"path/filepath"

	"github.com/tablestore/tablestore"
	"github.com/tablestore/tablestore/server"
)

// openStores opens each account's store (with --accounts, a
// subdirectory of the store directory each). On error it returns the
// accounts whose stores it opened, for the caller to close.
func (c *serveConfig) openStores(io *stdio) ([]server.Account, error) {
	var served []server.Account
	for _, a := range c.accounts {
		db, err := c.openStore(io, a.Name)
		if err != nil {
			return served, err
		}
		a.DB = db
		served = append(served, a)
	}
	return served, nil
}

// openStore opens the store of account.
func (c *serveConfig) openStore(io *stdio, account string) (*tablestore.DB, error) {
	if *c.f.inMemory {
		if *c.f.contBackup != "" {
			return nil, usagef("--continuous-backup needs a store directory, not --in-memory")
		}
		return tablestore.OpenInMemory(nil)
	}
	dir := c.where
	var opts *tablestore.Options
	if *c.f.contBackup != "" {
		if isRemote(c.where) {
			return nil, usagef("--continuous-backup needs a store directory")
		}
		opts = &tablestore.Options{ContinuousBackup: c.f.continuousBackup(account)}
	}
	if c.f.multi() { // each account's store is a subdirectory
		if isRemote(c.where) {
			return nil, usagef("--accounts needs a store directory")
		}
		dir = filepath.Join(c.where, account)
	}
	var db *tablestore.DB
	var err error
	if *c.f.create {
		db, err = openOrCreateStore(dir, opts, io.stderr, "serve")
	} else {
		db, err = openStoreOr(dir, opts, "add --create to make a new store there")
	}
	if err == nil && opts != nil && !opts.ContinuousBackup.BackgroundSync && !c.warnedBackupDisk && onOneDevice(dir, opts.ContinuousBackup.Dir) {
		c.warnedBackupDisk = true
		c.warn("the continuous backup in " + opts.ContinuousBackup.Dir + " is on the store's disk: every synced write waits for two disk syncs there, one of them the backup's; " +
			"put the backup on another disk, or add --continuous-backup-background-sync (docs/backup.md)")
	}
	return db, err
}

// continuousBackup is account's continuous backup as the flags set it.
func (f *serveFlags) continuousBackup(account string) *tablestore.ContinuousBackup {
	cb := &tablestore.ContinuousBackup{Dir: *f.contBackup, BaseInterval: *f.contBackupEvery,
		Retention: *f.contBackupRetention, BackgroundSync: *f.contBackupBgSync}
	if f.multi() {
		cb.Dir = filepath.Join(cb.Dir, account)
	}
	return cb
}
