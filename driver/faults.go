package driver

import (
	"context"
	"errors"
	"strings"
)

// CorruptError reports stored data that failed verification: a checksum
// mismatch, a file that does not parse, a record that does not decode. It
// matches ErrCorrupt.
type CorruptError struct {
	// File is the damaged file's path, "" when the driver cannot tell.
	File string
	// Op says what was being read or done when the damage showed, such as
	// "get (People, 'a', 'b')" or "background compaction".
	Op string
	// Err is what was detected.
	Err error
}

func (e *CorruptError) Error() string {
	var b strings.Builder
	b.WriteString("tablestore: corrupt data")
	if e.File != "" {
		b.WriteString(" in file ")
		b.WriteString(e.File)
	}
	if e.Op != "" {
		b.WriteString(" during ")
		b.WriteString(e.Op)
	}
	if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

// Unwrap returns ErrCorrupt and the detected error.
func (e *CorruptError) Unwrap() []error { return []error{ErrCorrupt, e.Err} }

// ErrNotStore is returned by an embedded driver's Open for a directory that
// holds files but no store.
var ErrNotStore = errors.New("tablestore: not a store")

// HealthReporter is implemented by drivers that detect faults which make
// them refuse writes, such as stored data found corrupt.
type HealthReporter interface {
	// Health returns nil while the store accepts writes, else the fault
	// that stopped them (an error matching ErrCorrupt for damaged data),
	// or while the disk is full an error matching ErrNoSpace, which clears
	// by itself once space returns. It does no I/O and is safe to call at
	// any time, even after Close.
	Health() error
}

// Checker is implemented by drivers that can verify their stored data.
type Checker interface {
	// Check reads every stored block, verifying checksums, and every
	// record, and reports what is damaged. It changes nothing. The error
	// is for a check that could not run (ErrClosed, ctx's error); damage
	// found is in the report.
	Check(ctx context.Context) (CheckReport, error)
}

// CheckReport is the result of a check.
type CheckReport struct {
	// Damaged lists the damaged files, in path order; empty when none.
	Damaged []DamagedFile
	// Files is how many files were read, Entities how many entities.
	Files, Entities int
}

// DamagedFile is one damaged file found by a check.
type DamagedFile struct {
	Path string
	// Kind is "sstable", "wal", "manifest", "options" or "clock" (the
	// clock's CLOCK file); "records" for stored records that do not
	// decode though their file's checksums hold, "index" for a secondary
	// index that disagrees with its table (Path is then empty).
	Kind string
	// Tables lists the tables with data in the file (names as created,
	// "#id" for a table missing from the catalog); "(catalog)" stands for
	// the store's own metadata. Empty when the file's contents are
	// unknown.
	Tables []string
	// Err says what is wrong.
	Err error
}
