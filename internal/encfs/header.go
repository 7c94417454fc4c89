package encfs

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/cockroachdb/pebble/v2"
	"github.com/tablestore/tablestore/driver"
)

// The file header.
//
// Every encrypted file starts with HeaderSize bytes: two copies (slots)
// of one header, so that rewrapping the data key (Rewrap) overwrites one
// slot at a time and a write torn by a crash leaves the other intact. A
// slot is
//
//	magic [8] | version u8 | generation u32 | key ID length u8 | key ID |
//	wrapped key length u16 | wrapped data key | IV [16] | tag [16]
//
// in big-endian, zero-padded to slotSize. The wrapped data key is the
// provider's wrapping of the file's random 256-bit data key under the
// key-encryption key named by key ID, with magic|version|key ID as its
// context. The tag is HMAC-SHA256, truncated to 16 bytes, of the slot up
// to the tag, under a key derived from the data key: a slot whose bytes
// were altered fails it (a corruption error), and so does a data key
// that does not belong to the slot. The newest intact slot (highest
// generation) is the header. File contents follow at offset HeaderSize,
// encrypted with AES-256-CTR under a second key derived from the data
// key, the counter starting at IV and advancing by one per 16-byte block
// of the file, so any byte range can be read or written by itself.

// HeaderSize is the size of the header that precedes the contents of
// every encrypted file; a file's logical size is its size less this.
const HeaderSize = 4096

const (
	slotSize   = HeaderSize / 2
	version    = 1
	maxKeyID   = 255
	maxWrapped = 1024
	tagSize    = 16
	ivSize     = 16
)

var magic = [8]byte{'T', 'S', 'E', 'N', 'C', 'R', 'Y', 'P'}

// slot is one parsed header copy.
type slot struct {
	gen     uint32
	keyID   string
	wrapped []byte
	iv      [ivSize]byte
	tag     [tagSize]byte
	signed  []byte // the bytes the tag covers
}

// wrapContext is the context (associated data) of the data key's
// wrapping.
func wrapContext(keyID string) []byte {
	b := append(magic[:len(magic):len(magic)], version)
	return append(b, keyID...)
}

// subkey derives a key for one use from the data key.
func subkey(dataKey []byte, use string) []byte {
	m := hmac.New(sha256.New, dataKey)
	m.Write([]byte("tablestore encfs " + use))
	return m.Sum(nil)
}

func (s *slot) computeTag(dataKey []byte) [tagSize]byte {
	m := hmac.New(sha256.New, subkey(dataKey, "header"))
	m.Write(s.signed)
	var t [tagSize]byte
	copy(t[:], m.Sum(nil))
	return t
}

// encode writes s into b (slotSize bytes), setting s.signed and s.tag.
func (s *slot) encode(b []byte, dataKey []byte) error {
	if len(s.keyID) == 0 || len(s.keyID) > maxKeyID {
		return fmt.Errorf("tablestore: encryption key ID %q must be 1 to %d bytes", s.keyID, maxKeyID)
	}
	if len(s.wrapped) > maxWrapped {
		return fmt.Errorf("tablestore: the key provider's wrapped key is %d bytes, over %d", len(s.wrapped), maxWrapped)
	}
	clear(b[:slotSize])
	n := copy(b, magic[:])
	b[n] = version
	n++
	binary.BigEndian.PutUint32(b[n:], s.gen)
	n += 4
	b[n] = byte(len(s.keyID))
	n++
	n += copy(b[n:], s.keyID)
	binary.BigEndian.PutUint16(b[n:], uint16(len(s.wrapped)))
	n += 2
	n += copy(b[n:], s.wrapped)
	n += copy(b[n:], s.iv[:])
	s.signed = b[:n]
	s.tag = s.computeTag(dataKey)
	copy(b[n:], s.tag[:])
	return nil
}

// errNoMagic is parseSlot's error for bytes that are no header at all.
var errNoMagic = errors.New("no encryption header")

// parseSlot parses the structure of one slot (slotSize bytes), without
// authenticating it.
func parseSlot(b []byte) (slot, error) {
	var s slot
	if len(b) < slotSize || !bytes.Equal(b[:len(magic)], magic[:]) {
		return s, errNoMagic
	}
	b = b[:slotSize]
	n := len(magic)
	if b[n] != version {
		return s, fmt.Errorf("encryption header version %d is not %d", b[n], version)
	}
	n++
	s.gen = binary.BigEndian.Uint32(b[n:])
	n += 4
	idLen := int(b[n])
	n++
	if idLen == 0 || n+idLen+2 > len(b) {
		return s, errors.New("encryption header: bad key ID length")
	}
	s.keyID = string(b[n : n+idLen])
	n += idLen
	wLen := int(binary.BigEndian.Uint16(b[n:]))
	n += 2
	if wLen > maxWrapped || n+wLen+ivSize+tagSize > len(b) {
		return s, errors.New("encryption header: bad wrapped key length")
	}
	s.wrapped = bytes.Clone(b[n : n+wLen])
	n += wLen
	copy(s.iv[:], b[n:])
	n += ivSize
	s.signed = bytes.Clone(b[:n])
	copy(s.tag[:], b[n:])
	return s, nil
}

// fileKeys is what a header yields: the file's data key (and its uses)
// and IV, and the slot it was read from.
type fileKeys struct {
	dataKey []byte
	iv      [ivSize]byte
	slot    slot
	index   int // which slot
}

// newHeader makes a header for a new file: a random data key and IV,
// wrapped under the provider's current key, both slots alike.
func newHeader(keys KeyProvider, path string) ([]byte, fileKeys, error) {
	var fk fileKeys
	fk.dataKey = make([]byte, KeySize)
	if _, err := randRead(fk.dataKey); err != nil {
		return nil, fk, err
	}
	if _, err := randRead(fk.iv[:]); err != nil {
		return nil, fk, err
	}
	s := slot{gen: 1, keyID: keys.CurrentKeyID(), iv: fk.iv}
	var err error
	if s.wrapped, err = keys.WrapKey(s.keyID, fk.dataKey, wrapContext(s.keyID)); err != nil {
		return nil, fk, &driver.EncryptionKeyError{KeyID: s.keyID, File: path, Err: err}
	}
	h := make([]byte, HeaderSize)
	if err := s.encode(h[:slotSize], fk.dataKey); err != nil {
		return nil, fk, err
	}
	copy(h[slotSize:], h[:slotSize])
	fk.slot = s
	return h, fk, nil
}

// decodeHeader authenticates the header h (HeaderSize bytes) of the file
// at path and returns its keys. Errors: *driver.EncryptionKeyError when
// keys cannot unwrap the data key (naming the key ID the file needs),
// an error matching driver.ErrCorrupt (and pebble.ErrCorruption) for a
// damaged or altered header, and errNoMagic (wrapped) for a file that is
// not encrypted.
func decodeHeader(h []byte, keys KeyProvider, path string) (fileKeys, error) {
	var parsed [2]slot
	var errs [2]error
	for i := range parsed {
		parsed[i], errs[i] = parseSlot(h[i*slotSize:])
	}
	if errors.Is(errs[0], errNoMagic) && errors.Is(errs[1], errNoMagic) {
		return fileKeys{}, &driver.CorruptError{File: path, Op: "read the encryption header", Err: errNoMagic}
	}
	order := []int{0, 1}
	if errs[0] != nil || (errs[1] == nil && parsed[1].gen > parsed[0].gen) {
		order = []int{1, 0}
	}
	var keyErr, firstErr error
	for _, i := range order {
		if errs[i] != nil {
			if firstErr == nil {
				firstErr = errs[i]
			}
			continue
		}
		s := parsed[i]
		if keys == nil {
			return fileKeys{}, &driver.EncryptionKeyError{KeyID: s.keyID, File: path}
		}
		dk, err := keys.UnwrapKey(s.keyID, s.wrapped, wrapContext(s.keyID))
		if err != nil {
			if errors.Is(err, driver.ErrCorrupt) {
				if firstErr == nil {
					firstErr = err
				}
			} else if keyErr == nil {
				keyErr = &driver.EncryptionKeyError{KeyID: s.keyID, File: path, Given: keys.CurrentKeyID(), Err: providerErr(err)}
			}
			continue
		}
		if len(dk) != KeySize {
			return fileKeys{}, fmt.Errorf("tablestore: the key provider unwrapped a %d-byte data key, not %d", len(dk), KeySize)
		}
		if t := s.computeTag(dk); !hmac.Equal(t[:], s.tag[:]) {
			if firstErr == nil {
				firstErr = errors.New("encryption header fails authentication")
			}
			continue
		}
		return fileKeys{dataKey: dk, iv: s.iv, slot: s, index: i}, nil
	}
	if keyErr != nil {
		return fileKeys{}, keyErr
	}
	return fileKeys{}, corrupt(path, firstErr)
}

// providerErr drops the built-in provider's own "unknown key" error,
// which EncryptionKeyError says better.
func providerErr(err error) error {
	if errors.Is(err, errUnknownKey) {
		return nil
	}
	return err
}

// corrupt is the error for a damaged header: it matches driver.ErrCorrupt
// and Pebble's corruption marker.
func corrupt(path string, err error) error {
	return &driver.CorruptError{File: path, Op: "read the encryption header", Err: fmt.Errorf("%w: %w", pebble.ErrCorruption, err)}
}

// IsEncrypted reports whether the first bytes of a file, head, start
// with an encryption header, and the key ID its newest slot names.
func IsEncrypted(head []byte) (keyID string, ok bool) {
	var best *slot
	for i := 0; i < 2 && (i+1)*slotSize <= len(head); i++ {
		s, err := parseSlot(head[i*slotSize:])
		if err == nil && (best == nil || s.gen > best.gen) {
			best = &s
		}
	}
	if best == nil {
		return "", len(head) >= len(magic) && bytes.Equal(head[:len(magic)], magic[:])
	}
	return best.keyID, true
}
