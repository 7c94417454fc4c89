package tablestore

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/tablestore/tablestore/edm"
	"github.com/tablestore/tablestore/internal/engine"
	"github.com/tablestore/tablestore/internal/entityenc"
)

// ContinuousBackupDir returns the absolute path of the store's
// continuous backup directory: the one it keeps (Options.ContinuousBackup),
// else the one it kept when it was last opened with one; "" for none.
// Rekey rotates that backup's keys too. A store restored from a backup
// has none. Errors: NotImplemented for a driver without continuous
// backup, ErrClosed, I/O errors.
func (db *DB) ContinuousBackupDir() (string, error) {
	b, ok := db.conn.(interface{ BackupDir() (string, error) })
	if !ok {
		return "", newError(edm.CodeNotImplemented, "this store's driver has no continuous backup")
	}
	dir, err := b.BackupDir()
	return dir, mapError(err, false)
}

// ErrOutsideWindow is matched by Restore's error (code OutOfRangeInput)
// for a time outside the backup's window; the message names the window.
var ErrOutsideWindow = engine.ErrOutsideWindow

// ListBackups describes the continuous backup in dir: its window, bases
// and log. A log that ends in a partial record (a crash during an
// append) is reported in Torn. Of opts (nil for the defaults) only
// Encryption applies: the key a backup written with encryption at rest
// is read with, as Open takes it.
//
// Errors: InvalidInput for a directory without a whole base, and, for
// an encrypted backup without its key (or with a key for a plain one),
// InvalidInput matching ErrEncryptionKey, unwrapping to an
// *EncryptionKeyError that names the key ID.
func ListBackups(dir string, opts *Options) (*BackupWindow, error) {
	o := opts.withDefaults()
	if err := o.Encryption.validate(); err != nil {
		return nil, err
	}
	w, err := engine.ListBackup(dir, o.Encryption.keys())
	if err != nil {
		return nil, causeError(edm.CodeInvalidInput, err)
	}
	return &w, nil
}

// Restore writes into directory into, which must be missing or empty,
// the store as it was at instant to (zero: the newest instant the
// backup holds), from the continuous backup in directory from: every
// commit at or before to, each transaction entirely or not at all, no
// later one; tables created later are absent and tables deleted later
// present. The result is opened and checked (as DB.Check) before Restore
// returns; opts (nil for the defaults) configure that open, their
// ContinuousBackup ignored. The backup may be in use by a running store.
//
// Encryption: a backup written with encryption at rest restores only
// with opts.Encryption holding the keys its files are wrapped under
// (Key, or PreviousKeys after a rotation); the result is encrypted
// too: the base's files keep their data keys, and every file the
// restore writes is under Encryption.Key. So the result opens with the
// same Encryption; DB.CheckpointEncrypted converts it. A missing or
// wrong key fails with InvalidInput matching ErrEncryptionKey (an
// *EncryptionKeyError naming the key ID) before into is touched.
//
// Errors: OutOfRangeInput matching ErrOutsideWindow for a time outside
// the window or inside one of its holes (the message names the ranges
// it accepts); InvalidInput for a non-empty into or a directory without a
// backup; InternalError wrapping a *DamagedBackupError for damage in the
// log the restore needs, and for damage the check finds.
func Restore(ctx context.Context, from string, to time.Time, into string, opts *Options) (*RestoreResult, error) {
	o := opts.withDefaults()
	if err := o.validate(); err != nil {
		return nil, err
	}
	res, err := engine.Restore(ctx, from, to, into, o.engineOptions())
	if err != nil {
		return nil, restoreError(err)
	}
	return &res.RestoreResult, nil
}

// causeError is an *Error with code that unwraps to err.
func causeError(code Code, err error) error {
	return &Error{Code: code, Message: strings.TrimPrefix(err.Error(), "tablestore: "), err: err}
}

// RestoreTable writes into directory into, which must be missing or
// empty, a new store holding one table of the store as it was at instant
// to (zero: the newest the backup holds): table name, named as in the
// new store ("" keeps the name). Every entity is the stored record of
// that instant, byte for byte, so its Timestamp and ETag are the ones it
// had; entities expired at to under the table's TTL are left out, and
// the table's settings (TTL, change feed, indexes, access policies) are
// not copied. The whole store is restored first in a directory beside
// into, removed when RestoreTable returns, so it needs that much free
// space. The result is checked before RestoreTable returns; Entities
// counts the table's entities. opts are as for Restore.
//
// Errors: those of Restore, and TableNotFound (ErrTableNotFound) for a
// table that did not exist at to.
func RestoreTable(ctx context.Context, from string, to time.Time, name, as, into string, opts *Options) (*RestoreResult, error) {
	o := opts.withDefaults()
	if err := o.validate(); err != nil {
		return nil, err
	}
	if as != "" {
		if err := coded(entityenc.ValidateTableName(as)); err != nil {
			return nil, err
		}
	}
	res, err := engine.RestoreTable(ctx, from, to, name, as, into, o.engineOptions())
	if err != nil {
		return nil, restoreError(err)
	}
	return &res.RestoreResult, nil
}

// restoreError maps a restore's error to an *Error.
func restoreError(err error) error {
	var damaged *DamagedBackupError
	switch {
	case errors.Is(err, ErrOutsideWindow):
		return causeError(edm.CodeOutOfRangeInput, err)
	case errors.As(err, &damaged):
		return causeError(edm.CodeInternalError, damaged)
	}
	return mapError(err, false)
}
