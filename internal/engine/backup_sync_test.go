package engine

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestBackupBackgroundSync: with BackgroundSync, a synced commit returns
// with its record written and the store's position at that record, and
// the background syncer then syncs it.
func TestBackupBackgroundSync(t *testing.T) {
	ctx := context.Background()
	opts := indexTestOptions()
	opts.Backup = &BackupOptions{Dir: filepath.Join(t.TempDir(), "backup"), BaseInterval: time.Hour, Retention: time.Hour,
		SegmentBytes: 64 << 20, BackgroundSync: true}
	db, err := Open(t.TempDir(), opts)
	require.NoError(t, err)
	defer db.Close()
	require.NoError(t, db.CreateTable(ctx, "T")) // a synced commit
	pos, err := db.backupPosition()
	require.NoError(t, err)
	require.Positive(t, pos.seq, "the store keeps its position")
	l := db.backup
	l.mu.Lock()
	require.GreaterOrEqual(t, l.written, pos.seq, "the record is written before the commit returns")
	l.mu.Unlock()

	synced := make(chan struct{})
	go func() {
		l.mu.Lock()
		for l.durable < pos.seq && l.err == nil {
			l.cond.Wait()
		}
		l.mu.Unlock()
		close(synced)
	}()
	select {
	case <-synced:
	case <-time.After(10 * time.Second):
		t.Fatal("the background syncer did not sync the record")
	}
	l.mu.Lock()
	require.NoError(t, l.err)
	l.mu.Unlock()
}
