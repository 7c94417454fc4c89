package tablestore

import (
	"github.com/tablestore/tablestore/driver"
	"github.com/tablestore/tablestore/edm"
)

// Re-exports. A type the root shares with the driver SPI is declared
// once, in driver (the engine fills it in), and named here with an
// alias so users need not import driver for it: one type, two names,
// the same values. Every public alias of the package is in this file (a
// lint rule holds it); the constants and functions that come with
// GUID, ActionType, ChangeOp and ImageMode, and the commit kinds, sit
// beside their uses, and the error codes are edm's own constants
// (edm.Code*).

// EngineMetrics are the store engine's operational figures, returned by
// DB.EngineMetrics; the fields are documented on driver.Metrics.
type EngineMetrics = driver.Metrics

// CheckReport is what a check found: the damaged files (empty when none;
// each a driver.DamagedFile, with the tables it holds data of) and how
// many files and entities it read.
type CheckReport = driver.CheckReport

// EncryptionKeyError is the error, matching ErrEncryptionKey, that names
// the key an encrypted store needs (KeyID), or says that a store given a
// key is not encrypted (KeyID ""); the *Error that Open returns unwraps
// to it.
type EncryptionKeyError = driver.EncryptionKeyError

// BackupWindow describes a continuous backup directory, from
// ListBackups: Restore accepts any instant from Oldest to Newest but
// those inside a hole. Its fields, documented on driver.BackupWindow:
// Oldest and Newest; Bases, the bases' times; Segments and Bytes of the
// log; FirstSeq and LastSeq, the commits the window spans; Torn, a
// partial last record; Damaged, a damaged last record; Holes, the
// stretches whose commits were lost; and Ranges, the stretches Restore
// accepts.
type BackupWindow = driver.BackupWindow

// BackupHole is a stretch of lost commits, records FirstSeq to LastSeq,
// committed after instant After and before Before: Restore refuses any
// instant strictly between the two.
type BackupHole = driver.BackupHole

// BackupRange is a stretch of instants Restore accepts, From and To
// included.
type BackupRange = driver.BackupRange

// RestoreResult describes a finished Restore or RestoreTable: the Base
// it started from, the Records (commits) replayed after it, the Time
// restored (the one asked for, or the newest), and the Entities the
// check of the result read.
type RestoreResult = driver.RestoreResult

// DamagedBackupError reports a damaged record of a backup's log (a
// checksum mismatch, a bad length, a gap in the sequence) with its File
// and byte Offset and the Reason; Restore never replays past one.
type DamagedBackupError = driver.DamagedBackupError

// ActionType is the kind of one write, or of one action of an entity
// group transaction; String gives the Azure SDKs' name of it.
type ActionType = driver.ActionType

// IndexState is the state of an index (IndexBuilding, IndexReady);
// String gives "building" or "ready".
type IndexState = driver.IndexState

// GUID is an Edm.Guid value: 16 bytes in the order the canonical text
// form xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx shows them.
type GUID = edm.GUID

// ImageMode says what a change holds besides the keys, ETag and
// Timestamp.
type ImageMode = driver.ImageMode

// ChangeOp is what a change did. The entity writes' values are those
// of ActionType.
type ChangeOp = driver.ChangeOp

// Code is one of Azure Table Storage's error codes, such as
// "EntityAlreadyExists", spelled edm.CodeEntityAlreadyExists: package
// edm holds every code, and Error.Code and ErrorCode use this name. The
// codes are Azure's own, so code that handles Azure errors by code
// handles ours the same way.
type Code = edm.Code

// IndexSpec declares a secondary index of a table: the values of 1 to 4
// user properties, in order, for every entity (see Table.CreateIndex; the
// fields' rules are on driver.IndexSpec).
type IndexSpec = driver.IndexSpec
