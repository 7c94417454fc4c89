package driver

import (
	"fmt"
	"time"
)

// BackupWindow describes a continuous backup directory: a restore
// accepts any instant from Oldest to Newest but those inside a hole
// (see Ranges).
type BackupWindow struct {
	// Oldest is the oldest base's time, Newest the last whole record's
	// (or the newest base's).
	Oldest, Newest time.Time
	// Bases are the bases' times, oldest first.
	Bases []time.Time
	// Segments and Bytes are the log's files and their size.
	Segments int
	Bytes    int64
	// FirstSeq and LastSeq number the commits the window spans: the
	// oldest base holds every commit up to FirstSeq.
	FirstSeq, LastSeq uint64
	// Torn, when not "", says the last segment ends in a partial record
	// (a crash during an append); the window ends before it.
	Torn string
	// Damaged, when not nil, is a damaged record at the end of the log;
	// the window ends before it and a restore past it fails.
	Damaged *DamagedBackupError
	// Holes are stretches whose commits the backup lost (a power loss
	// with background sync), oldest first; Ranges are the stretches a
	// restore accepts, ends included: [Oldest, Newest] without a hole,
	// otherwise the ones between the holes.
	Holes  []BackupHole
	Ranges []BackupRange
}

// BackupHole is a stretch of lost commits: records FirstSeq to LastSeq,
// committed after instant After and before Before. A restore refuses
// any instant strictly between the two.
type BackupHole struct {
	After, Before     time.Time
	FirstSeq, LastSeq uint64
}

// BackupRange is a stretch of instants a restore accepts, From and To
// included.
type BackupRange struct {
	From, To time.Time
}

// RestoreResult describes a finished restore.
type RestoreResult struct {
	Base    time.Time // the base it started from
	Records int       // commits replayed after the base
	// Time is the instant restored: the one asked for, or the newest.
	Time time.Time
	// Entities is the number of entities the check of the result read.
	Entities int
}

// DamagedBackupError reports a damaged record of a backup's log (a
// checksum mismatch, a bad length, a gap in the sequence), with its file
// and byte offset; a restore never replays past one.
type DamagedBackupError struct {
	File   string
	Offset int64
	Reason string
}

func (e *DamagedBackupError) Error() string {
	return fmt.Sprintf("tablestore: backup segment %s is damaged at byte %d: %s", e.File, e.Offset, e.Reason)
}
