package engine

import "time"

// backupLog is continuous backup's state; nil when it is off.
type backupLog struct {
	// last is the time of the last record or instant handed out, in
	// Unix nanoseconds, under changes.mu.
	last int64
}

// backupInstant returns the current instant on the store's clock, for a
// view: with continuous backup on, it is no earlier than any record's
// time so far, and every later record's time is after it.
// REQUIRES: db.changes.mu held.
func (db *Engine) backupInstant() time.Time {
	now := db.opts.Clock()
	if db.backup == nil {
		return now
	}
	t := max(now.UnixNano(), db.backup.last)
	db.backup.last = t
	return time.Unix(0, t).UTC()
}
