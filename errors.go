// Errors have one idiom. Match a failure with errors.Is against the Err
// sentinels below (one per code, ErrClosed, ErrNoSpace and the others
// beside them). Every failure is an *Error carrying Azure's error code,
// spelled edm.Code* (package edm defines the codes; Code here is its
// alias); a failed transaction is a *BatchError carrying the failing
// action's index and that action's *Error. ErrorCode(err) is the shortcut
// that reads the code without errors.As, kept because callers compare
// codes often (tests and the servers' status mapping).

package tablestore

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/tablestore/tablestore/driver"
	"github.com/tablestore/tablestore/edm"
	"github.com/tablestore/tablestore/internal/entityenc"
)

// Sentinel errors, one per code, for errors.Is. Every *Error and
// *BatchError matches the sentinel of its code:
//
//	if errors.Is(err, tablestore.ErrEntityAlreadyExists) { ... }
var (
	ErrTableAlreadyExists                      = newSentinel(edm.CodeTableAlreadyExists, "table already exists")
	ErrTableNotFound                           = newSentinel(edm.CodeTableNotFound, "table not found")
	ErrResourceNotFound                        = newSentinel(edm.CodeResourceNotFound, "resource not found")
	ErrEntityAlreadyExists                     = newSentinel(edm.CodeEntityAlreadyExists, "entity already exists")
	ErrUpdateConditionNotSatisfied             = newSentinel(edm.CodeUpdateConditionNotSatisfied, "update condition not satisfied")
	ErrPropertiesNeedValue                     = newSentinel(edm.CodePropertiesNeedValue, "properties need value")
	ErrInvalidInput                            = newSentinel(edm.CodeInvalidInput, "invalid input")
	ErrOutOfRangeInput                         = newSentinel(edm.CodeOutOfRangeInput, "out of range input")
	ErrInvalidResourceName                     = newSentinel(edm.CodeInvalidResourceName, "invalid resource name")
	ErrPropertyValueTooLarge                   = newSentinel(edm.CodePropertyValueTooLarge, "property value too large")
	ErrEntityTooLarge                          = newSentinel(edm.CodeEntityTooLarge, "entity too large")
	ErrTooManyProperties                       = newSentinel(edm.CodeTooManyProperties, "too many properties")
	ErrKeyValueTooLarge                        = newSentinel(edm.CodeKeyValueTooLarge, "key value too large")
	ErrPropertyNameInvalid                     = newSentinel(edm.CodePropertyNameInvalid, "property name invalid")
	ErrPropertyNameTooLong                     = newSentinel(edm.CodePropertyNameTooLong, "property name too long")
	ErrDuplicatePropertiesSpecified            = newSentinel(edm.CodeDuplicatePropertiesSpecified, "duplicate properties specified")
	ErrInvalidValueType                        = newSentinel(edm.CodeInvalidValueType, "invalid value type")
	ErrInvalidDuplicateRow                     = newSentinel(edm.CodeInvalidDuplicateRow, "invalid duplicate row")
	ErrCommandsInBatchActOnDifferentPartitions = newSentinel(edm.CodeCommandsInBatchActOnDifferentPartitions, "commands in batch act on different partitions")
	ErrNotImplemented                          = newSentinel(edm.CodeNotImplemented, "not implemented")
	ErrRequestBodyTooLarge                     = newSentinel(edm.CodeRequestBodyTooLarge, "request body too large")
	ErrTableBeingDeleted                       = newSentinel(edm.CodeTableBeingDeleted, "table being deleted")
	ErrInternalError                           = newSentinel(edm.CodeInternalError, "internal error")
	ErrServerBusy                              = newSentinel(edm.CodeServerBusy, "server busy")
	ErrOperationTimedOut                       = newSentinel(edm.CodeOperationTimedOut, "operation timed out")
	ErrStoreClosed                             = newSentinel(edm.CodeStoreClosed, "store closed")
	// ErrOperationNotAllowedOnCurrentTarget: a write to a Snapshot.
	ErrOperationNotAllowedOnCurrentTarget = newSentinel(edm.CodeOperationNotAllowedOnCurrentTarget, "operation not allowed on current target")
)

// ErrClosed is matched by the error of every operation on a closed DB (an
// *Error with code StoreClosed, which is not retryable: the DB stays
// closed).
var ErrClosed = driver.ErrClosed

// ErrNoSpace is matched by the error (an *Error with code ServerBusy,
// retryable) of a write refused because the store's disk is full, or
// because the storage engine stalled writes for longer than the write's
// deadline (Options.WriteTimeout, or its context's). Reads go on while
// the disk is full, Health reports it, and writes resume by themselves
// within about a second of space being freed, without a reopen. A
// refused write was not applied, unless its message says that it may
// still be applied: a write already handed to the storage engine when
// the disk filled up can complete once space returns.
var ErrNoSpace = driver.ErrNoSpace

// ErrBackupStopped is matched by the error (code InternalError, not
// ServerBusy: waiting does not clear it) of a write refused because the
// store's continuous backup could not write its log (a full or failing
// backup disk), and by Health's. The log ends at its failure point; the
// store refuses writes until it is reopened, and the reopened store
// records the commits the log lost as a hole (BackupWindow.Holes).
var ErrBackupStopped = driver.ErrBackupStopped

// ErrAppliedBackupStopped is matched by the error of the write whose
// backup record could not be written: the write IS applied, and shows
// in the change feed, so it must not be retried; the backup has stopped
// as for ErrBackupStopped, which the error matches too.
var ErrAppliedBackupStopped = driver.ErrAppliedBackupStopped

// ErrCursorExpired is matched by the error (code OutOfRangeInput) of a
// change feed read from a cursor older than the feed's retention.
var ErrCursorExpired = driver.ErrCursorExpired

// ErrCursorStale is matched by the error (code InvalidInput) of a change
// feed read from a cursor of another table (the table was deleted or
// re-created since) or ahead of the feed.
var ErrCursorStale = driver.ErrCursorStale

// ErrNotStore is matched by Open's error for a directory that holds files
// but no store (an *Error with code InvalidInput).
var ErrNotStore = driver.ErrNotStore

// ErrEncryptionKey is matched by Open's error (an *Error with code
// InvalidInput, unwrapping to an *EncryptionKeyError that names the key
// ID) when the store needs a key that was not given, or when a key was
// given for a store that is not encrypted.
var ErrEncryptionKey = driver.ErrEncryptionKey

// codeOf gives an error without an Azure code the code an Azure client
// would see for it: StoreClosed for ErrClosed (not retryable), ServerBusy
// for ErrNoSpace (503, retry later), OperationTimedOut for a context's
// cancellation or deadline (as Azure's server-side timeout), InvalidInput
// for ErrNotStore and ErrEncryptionKey, and InternalError for the rest:
// ErrCorrupt, I/O and lock errors.
func codeOf(err error) Code {
	switch {
	case errors.Is(err, ErrClosed):
		return edm.CodeStoreClosed
	case errors.Is(err, ErrNoSpace):
		return edm.CodeServerBusy
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return edm.CodeOperationTimedOut
	case errors.Is(err, ErrNotStore), errors.Is(err, ErrEncryptionKey):
		return edm.CodeInvalidInput
	}
	return edm.CodeInternalError
}

type sentinel struct {
	code Code
	msg  string
}

func (s *sentinel) Error() string { return "tablestore: " + s.msg }

var sentinels = map[Code]*sentinel{}

func newSentinel(code Code, msg string) error {
	s := &sentinel{code: code, msg: msg}
	sentinels[code] = s
	return s
}

// Error is the error every failed operation returns (for batches, wrapped
// in a *BatchError). Code is Azure's error code; Message says what was
// wrong in lowercase prose.
type Error struct {
	Code    Code
	Message string
	// err is the cause: for an error that is not about the request,
	// ErrClosed, ErrCorrupt, a context's error or an I/O error; for a
	// rejected $filter, the *filter.Error with its position.
	err error
}

// Unwrap returns the cause, for errors.Is(err, ErrCorrupt),
// errors.Is(err, context.Canceled) and the like; nil for errors about the
// request.
func (e *Error) Unwrap() error { return e.err }

func (e *Error) Error() string {
	return fmt.Sprintf("tablestore: %s: %s", e.Code, e.Message)
}

// Is reports whether target is the sentinel of e's code.
func (e *Error) Is(target error) bool {
	s, ok := target.(*sentinel)
	return ok && s.code == e.Code
}

// BatchError is returned by a failed entity group transaction. Index is the
// 0-based position of the failing action, as Azure reports it; nothing of
// the transaction was applied. It unwraps to the action's *Error.
type BatchError struct {
	Index int
	Err   *Error
}

func (e *BatchError) Error() string {
	return fmt.Sprintf("tablestore: transaction action %d: %s: %s", e.Index, e.Err.Code, e.Err.Message)
}

// Unwrap returns the failing action's error.
func (e *BatchError) Unwrap() error { return e.Err }

// ErrorCode returns the Azure error code carried by err, or "" if err
// carries none.
func ErrorCode(err error) Code {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}

func newError(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// coded turns an error of the internal packages (an *entityenc.Error,
// input refused by one of Azure's rules) into an *Error with the same
// code and message; nil and any other error are returned as they are.
func coded(err error) error {
	if e, ok := err.(*entityenc.Error); ok {
		return &Error{Code: e.Code, Message: e.Message}
	}
	return err
}

// mapError turns a driver's error into this package's, in one place for
// every driver: a *driver.Error becomes an *Error with the same code and
// message, wrapped in a *BatchError with the failing action's index when
// tx is set (a transaction); any other error becomes an *Error that
// unwraps to it (see codeOf).
func mapError(err error, tx bool) error {
	if err == nil {
		return nil
	}
	var de *driver.Error
	if !errors.As(err, &de) {
		var e *Error
		if errors.As(err, &e) {
			return err
		}
		return &Error{Code: codeOf(err), Message: strings.TrimPrefix(err.Error(), "tablestore: "), err: err}
	}
	e := &Error{Code: de.Code, Message: de.Message}
	if tx {
		return &BatchError{Index: de.Index, Err: e}
	}
	return e
}

// asBatchError wraps a failing action's error with its index. Errors that
// are not about an action (ErrClosed, a context error, an I/O error) are
// returned as they are.
func asBatchError(i int, err error) error {
	var e *Error
	if err == nil || !errors.As(err, &e) {
		return err
	}
	return &BatchError{Index: i, Err: e}
}

// corruptEntity is the error for the stored entity (pk, rk) whose record
// does not decode: it matches ErrCorrupt and names the entity.
func corruptEntity(pk, rk string, err error) error {
	return mapError(&driver.CorruptError{Op: fmt.Sprintf("decode of entity (%s, %s)", entityenc.QuoteShort(pk), entityenc.QuoteShort(rk)), Err: err}, false)
}

// ErrCorrupt is matched by the error (an *Error with code InternalError)
// of an operation that met damaged stored data: a block failing its
// checksum, a file that does not parse, a record that does not decode. The
// message names the file when known and what was being read. It means the
// store was damaged outside this library; see DB.Health and DB.Check.
var ErrCorrupt = driver.ErrCorrupt
