package engine

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/tablestore/tablestore/driver"
)

// The clock's durable ceiling lives in a file of its own, CLOCK, beside
// Pebble's files, not in the keyspace. A key rewritten every few
// milliseconds landed in every memtable: each flushed sstable then
// spanned from the catalog to the newest entities, so the sstables of a
// sorted load overlapped and were compacted, where raw Pebble moves them
// down untouched.
//
// The file holds two slots, each in its own 512-byte sector, written in
// turn and synced: a write torn by a crash damages only the slot being
// written, and the other still holds the ceiling before it, above every
// value issued until the torn write would have returned. A slot is
// clockMagic, a generation and the ceiling (big-endian), and a CRC-32C
// of those; the intact slot of the later generation holds the ceiling
// (it may be the lower one: Close lowers the ceiling).
const (
	clockFileName = "CLOCK"
	clockTempName = "CLOCK.tmp"
	clockSlotSize = 512
	clockSlotLen  = 24
	clockMagic    = "TSCL"
)

// clockSlot is a slot's content.
type clockSlot struct {
	gen     uint64
	ceiling int64
}

// clockFile is a store's CLOCK file. Its first write opens it, or
// creates it when there was none (last.gen 0: generations start at 1), so
// Open itself writes nothing.
type clockFile struct {
	fs   vfs.FS
	dir  string
	f    vfs.File  // nil until the first write
	last clockSlot // the slot holding the ceiling
	next int       // the slot the next write goes to
	buf  [clockSlotLen]byte
}

// readClockFile reads dir's CLOCK file: its newest intact slot, which
// holds the ceiling, or a zero slot when there is no such file. A file
// with no intact slot is corrupt.
func readClockFile(fs vfs.FS, dir string) (*clockFile, error) {
	c := &clockFile{fs: fs, dir: dir}
	path := fs.PathJoin(dir, clockFileName)
	f, err := fs.Open(path)
	if err != nil {
		if isNotExist(err) {
			return c, nil
		}
		return nil, fmt.Errorf("tablestore: open %q: %w", path, err)
	}
	defer f.Close()
	var data [2 * clockSlotSize]byte
	n, err := io.ReadFull(f, data[:])
	if err != nil && err != io.ErrUnexpectedEOF && err != io.EOF {
		return nil, fmt.Errorf("tablestore: read %q: %w", path, err)
	}
	for i := range 2 {
		lo := i * clockSlotSize
		if n < lo+clockSlotLen {
			break
		}
		if v, valid := decodeClockSlot(data[lo : lo+clockSlotLen]); valid && v.gen > c.last.gen {
			c.last, c.next = v, 1-i
		}
	}
	if c.last.gen == 0 {
		return nil, &driver.CorruptError{File: path, Op: "open", Err: errBadClock}
	}
	return c, nil
}

// encodeClockSlot writes s into b.
func encodeClockSlot(b *[clockSlotLen]byte, s clockSlot) {
	copy(b[:4], clockMagic)
	binary.BigEndian.PutUint64(b[4:12], s.gen)
	binary.BigEndian.PutUint64(b[12:20], uint64(s.ceiling))
	binary.BigEndian.PutUint32(b[20:], crc32.Checksum(b[:20], castagnoli))
}

// decodeClockSlot reads a slot; valid is false for a slot never written
// or torn.
func decodeClockSlot(b []byte) (s clockSlot, valid bool) {
	if !bytes.Equal(b[:4], []byte(clockMagic)) || binary.BigEndian.Uint32(b[20:24]) != crc32.Checksum(b[:20], castagnoli) {
		return s, false
	}
	return clockSlot{gen: binary.BigEndian.Uint64(b[4:12]), ceiling: int64(binary.BigEndian.Uint64(b[12:20]))}, true
}

// createClockFile writes a new CLOCK file in dir holding ceiling, made
// whole under a temporary name and renamed, with the directory synced:
// the file either is absent after a crash or holds ceiling.
func createClockFile(fs vfs.FS, dir string, ceiling int64) error {
	tmp, path := fs.PathJoin(dir, clockTempName), fs.PathJoin(dir, clockFileName)
	f, err := fs.Create(tmp, vfs.WriteCategoryUnspecified)
	if err != nil {
		return err
	}
	var data [2 * clockSlotSize]byte
	var slot [clockSlotLen]byte
	encodeClockSlot(&slot, clockSlot{gen: 1, ceiling: ceiling})
	copy(data[:], slot[:])
	_, err = f.Write(data[:])
	err = errors.Join(err, f.Sync(), f.Close())
	if err == nil {
		err = fs.Rename(tmp, path)
	}
	if err == nil {
		err = syncDir(fs, dir)
	}
	if err != nil {
		return fmt.Errorf("tablestore: create %q: %w", path, err)
	}
	return nil
}

// syncDir makes the names in dir durable.
func syncDir(fs vfs.FS, dir string) error {
	d, err := fs.OpenDir(dir)
	if err != nil {
		return err
	}
	return errors.Join(d.Sync(), d.Close())
}

// write stores ceiling in the next slot, of the next generation, synced
// (the first write of a store without the file creates it).
// REQUIRES: one write at a time (the clock moves its ceiling once at a
// time).
func (c *clockFile) write(ceiling int64) error {
	if c.f == nil {
		if c.last.gen == 0 {
			if err := createClockFile(c.fs, c.dir, ceiling); err != nil {
				return err
			}
			c.last, c.next = clockSlot{gen: 1, ceiling: ceiling}, 1
			return c.open()
		}
		if err := c.open(); err != nil {
			return err
		}
	}
	s := clockSlot{gen: c.last.gen + 1, ceiling: ceiling}
	encodeClockSlot(&c.buf, s)
	if _, err := c.f.WriteAt(c.buf[:], int64(c.next*clockSlotSize)); err != nil {
		return err
	}
	if err := c.f.Sync(); err != nil {
		return err
	}
	c.last, c.next = s, 1-c.next
	return nil
}

// open opens the file for writing.
func (c *clockFile) open() error {
	path := c.fs.PathJoin(c.dir, clockFileName)
	f, err := c.fs.OpenReadWrite(path, vfs.WriteCategoryUnspecified)
	if err != nil {
		return fmt.Errorf("tablestore: open %q: %w", path, err)
	}
	c.f = f
	return nil
}

// close closes the file if a write opened it; c may be nil.
func (c *clockFile) close() error {
	if c == nil || c.f == nil {
		return nil
	}
	return c.f.Close()
}
