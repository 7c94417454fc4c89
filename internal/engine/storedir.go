package engine

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	iofs "io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/record"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cockroachdb/pebble/v2/vfs/atomicfs"
	"github.com/tablestore/tablestore/driver"
	"github.com/tablestore/tablestore/edm"
	"github.com/tablestore/tablestore/internal/keys"
)

// What makes a directory a store.
//
// A store is a Pebble directory whose keyspace holds the store marker
// (meta | 'S' -> storeFormat), written when the store is created. Stores
// made before the marker existed are recognised by their catalog keys
// (a next-ID, clock or table entry) and get the marker at their next Open;
// an empty Pebble keyspace is taken as such a store with no tables yet.
// A directory that does not exist, is empty, or holds only what an
// interrupted creation left (see onlyCreationLeftovers) becomes a new
// store; any other directory is refused with driver.ErrNotStore, unless
// it has Pebble's files without its MANIFEST marker, which is damage
// (driver.ErrCorrupt).

const storeFormat = 1

func storeMarkerKey() []byte {
	return append(keys.TablePrefix(nil, keys.MetaTableID), 'S')
}

// inspectDir decides how to open dir: fresh reports an absent or empty
// directory. For an existing store it verifies the current MANIFEST first
// (Pebble takes a damaged MANIFEST record for the end of the file and
// would open an older state silently, then delete the newer files as
// obsolete).
func inspectDir(fs vfs.FS, dir string) (fresh bool, err error) {
	ls, err := fs.List(dir)
	if err != nil {
		if isNotExist(err) {
			return true, nil
		}
		return false, fmt.Errorf("tablestore: open %q: %w", dir, err)
	}
	if len(ls) == 0 {
		return true, nil
	}
	manifest, err := atomicfs.ReadMarker(fs, dir, "manifest")
	if err != nil || manifest == "" {
		if onlyCreationLeftovers(ls) {
			return true, nil // a creation that stopped before any data
		}
		for _, name := range ls {
			if looksLikePebble(name) {
				return false, &driver.CorruptError{File: dir, Op: "open", Err: errors.New("pebble files without a MANIFEST marker")}
			}
		}
		return false, fmt.Errorf("%w: %q holds files but no store", driver.ErrNotStore, dir)
	}
	path := fs.PathJoin(dir, manifest)
	if err := verifyLog(fs, path, false); err != nil {
		if errors.Is(err, driver.ErrEncryptionKey) || errors.Is(err, driver.ErrCorrupt) {
			return false, err
		}
		return false, &driver.CorruptError{File: path, Op: "open", Err: err}
	}
	// Pebble v2.1.7 also replays a WAL only up to a damaged record when
	// intact records follow it, dropping them silently.
	for _, name := range ls {
		if strings.HasSuffix(name, ".log") {
			path := fs.PathJoin(dir, name)
			if err := verifyLog(fs, path, true); err != nil {
				if errors.Is(err, driver.ErrEncryptionKey) || errors.Is(err, driver.ErrCorrupt) {
					return false, err
				}
				return false, &driver.CorruptError{File: path, Op: "open", Err: err}
			}
		}
	}
	return false, nil
}

// missingStore is Open's error, with MustExist, for dir that inspectDir
// found fresh: ResourceNotFound, naming dir and what it holds.
func missingStore(fs vfs.FS, dir string) error {
	why := "the directory does not exist"
	if ls, err := fs.List(dir); err == nil {
		why = "the directory is empty"
		if len(ls) > 0 {
			why = "the directory holds only the start of a store creation that did not finish"
		}
	}
	return errorf(edm.CodeResourceNotFound, "no store in %q: %s", dir, why)
}

func isNotExist(err error) bool { return errors.Is(err, iofs.ErrNotExist) }

// onlyCreationLeftovers reports whether ls, a directory without a
// MANIFEST marker, holds nothing but the files Pebble writes while it
// creates a store, before it sets that marker: the lock, options, the
// format marker, temporary files and the first MANIFEST. Data is written
// only after the marker, and always leaves a WAL or an sstable, so none
// can have been written.
func onlyCreationLeftovers(ls []string) bool {
	for _, name := range ls {
		if name != "LOCK" && name != "MANIFEST-000001" && !strings.HasPrefix(name, "OPTIONS-") &&
			!strings.HasPrefix(name, "marker.format-version.") && !strings.HasSuffix(name, ".dbtmp") {
			return false
		}
	}
	return true
}

// looksLikePebble reports whether name is one of Pebble's file names.
func looksLikePebble(name string) bool {
	for _, p := range []string{"MANIFEST-", "OPTIONS-", "marker.", "CURRENT", "LOCK"} {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return strings.HasSuffix(name, ".sst") || strings.HasSuffix(name, ".log") || strings.HasSuffix(name, ".blob")
}

// verifyLog reads every record of a MANIFEST or WAL file. A record that
// fails its checksum is damage unless it can be a write torn by a crash:
// in a WAL, when no intact chunk follows it (Pebble's own rule, so damage
// confined to a WAL's last record is dropped like a torn write); in a
// MANIFEST, only when every byte from it on is zero (unwritten space), for
// Pebble would take any damaged MANIFEST record for the end of the file
// and silently open an older state. A MANIFEST must also start with an
// intact record, since Pebble writes one when it creates the file.
func verifyLog(fs vfs.FS, path string, wal bool) error {
	f, err := fs.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	data, err := io.ReadAll(f)
	if err != nil {
		return err
	}
	var logNum uint64
	if wal {
		if n, ok := logNumber(fs.PathBase(path)); ok {
			logNum = n
		}
	}
	num := pebble.SSTableInfo{}.BackingSSTNum // Pebble's internal file-number type
	setUint64(&num, logNum)
	rr := record.NewReader(strings.NewReader(string(data)), num)
	for n := 0; ; n++ {
		start := rr.Offset()
		r, err := rr.Next()
		if err == nil {
			_, err = io.Copy(io.Discard, r)
		}
		switch {
		case err == nil:
			continue
		case errors.Is(err, io.EOF) && n > 0, errors.Is(err, io.EOF) && wal:
			return nil
		case errors.Is(err, io.EOF):
			return errors.New("empty")
		case record.IsInvalidRecord(err) || errors.Is(err, io.ErrUnexpectedEOF):
			if n == 0 && !wal {
				return fmt.Errorf("first record at offset %d: %w", start, err)
			}
			if off, ok := intactChunkAfter(data, int(start)+1, uint32(logNum)); ok {
				return fmt.Errorf("record at offset %d: %w (an intact record follows at offset %d)", start, err, off)
			}
			if !wal && !allZero(data[start:]) {
				return fmt.Errorf("record at offset %d: %w", start, err)
			}
			return nil
		default:
			return fmt.Errorf("record at offset %d: %w", start, err)
		}
	}
}

func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

func setUint64[T ~uint64](p *T, n uint64) { *p = T(n) }

// LogExtent returns the offset just past the last intact record of the
// WAL at path (a recycled WAL holds stale records after it), for tests
// that damage live records.
func LogExtent(path string) (int64, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	n, _ := logNumber(filepath.Base(path))
	num := pebble.SSTableInfo{}.BackingSSTNum
	setUint64(&num, n)
	rr := record.NewReader(strings.NewReader(string(data)), num)
	var end int64
	for {
		r, err := rr.Next()
		if err == nil {
			_, err = io.Copy(io.Discard, r)
		}
		if err != nil {
			return end, nil
		}
		end = rr.Offset()
	}
}

// logNumber parses a WAL file name, "000123.log".
func logNumber(name string) (uint64, bool) {
	var n uint64
	if _, err := fmt.Sscanf(name, "%d.log", &n); err != nil {
		return 0, false
	}
	return n, true
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// intactChunkAfter looks for the start of a record (a full or first
// chunk) of Pebble's record format (checksum u32, length u16, type u8,
// [log number u32 [synced offset u64]], payload; the checksum, masked
// CRC-32C, covers type through payload) at any offset from off on whose
// checksum holds and, in the formats that carry one, whose log number is
// logNum (a recycled WAL keeps stale records of its former number).
// Middle and last chunks do not count: a record torn by a crash while it
// was written across blocks leaves its first blocks' chunks intact. A
// random match has odds of 2^-32 per offset.
func intactChunkAfter(data []byte, off int, logNum uint32) (int, bool) {
	for p := off; p+7 <= len(data); p++ {
		length := int(binary.LittleEndian.Uint16(data[p+4:]))
		typ := data[p+6]
		header := 7
		switch {
		case typ >= 1 && typ <= 4:
		case typ >= 5 && typ <= 8:
			header = 11
		case typ >= 9 && typ <= 12:
			header = 19
		default:
			continue
		}
		if (typ-1)%4 >= 2 { // a middle or last chunk
			continue
		}
		end := p + header + length
		if end > len(data) || (length == 0 && binary.LittleEndian.Uint32(data[p:]) == 0) {
			continue
		}
		if header > 7 && binary.LittleEndian.Uint32(data[p+7:]) != logNum {
			continue
		}
		c := crc32.Update(0, castagnoli, data[p+6:end])
		if binary.LittleEndian.Uint32(data[p:]) == (c>>15|c<<17)+0xa282ead8 {
			return p, true
		}
	}
	return 0, false
}

// checkStoreMarker runs at Open after the catalog is loaded: it accepts a
// keyspace with the marker or with catalog keys (writing the marker for
// the latter), or an empty one, and refuses anything else.
func (db *Engine) checkStoreMarker(fresh bool) error {
	_, closer, err := db.pdb.Get(storeMarkerKey())
	if err == nil {
		return closer.Close()
	}
	if !errors.Is(err, pebble.ErrNotFound) {
		return db.storageErr("open: read the store marker", err)
	}
	if !fresh && len(db.tables) == 0 && db.nextID == 1 && db.clock.ceiling == 0 {
		it, err := db.pdb.NewIter(nil)
		if err != nil {
			return db.storageErr("open", err)
		}
		any := it.First()
		err = errors.Join(it.Error(), it.Close())
		if err != nil {
			return db.storageErr("open: read the keyspace", err)
		}
		if any {
			return fmt.Errorf("%w: the directory holds a Pebble store made by another program", driver.ErrNotStore)
		}
	}
	return db.storageErr("open: write the store marker",
		db.pdb.Set(storeMarkerKey(), []byte{storeFormat}, pebble.Sync))
}
