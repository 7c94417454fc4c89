package encfs

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"

	"github.com/tablestore/tablestore/driver"
)

// KeySize is the size of every key: key-encryption keys and data keys
// are AES-256 keys.
const KeySize = 32

// KeyProvider holds the key-encryption keys (KEKs) that wrap each file's
// data key. A KMS or an HSM implements it by wrapping and unwrapping
// remotely; StaticKeys holds the keys in memory.
type KeyProvider interface {
	// CurrentKeyID names the key that wraps the data keys of new files.
	CurrentKeyID() string
	// WrapKey encrypts dataKey under the key keyID, binding context (a
	// public byte string the same call to UnwrapKey passes back).
	WrapKey(keyID string, dataKey, context []byte) ([]byte, error)
	// UnwrapKey decrypts what WrapKey returned. It fails with an error
	// matching driver.ErrCorrupt when wrapped or context were altered,
	// and with any other error when it does not hold the key keyID.
	UnwrapKey(keyID string, wrapped, context []byte) ([]byte, error)
}

// KeyID names a key-encryption key by its fingerprint: 16 hex digits of
// a SHA-256 of the key, which identify it without revealing it.
func KeyID(kek []byte) string {
	h := sha256.New()
	h.Write([]byte("tablestore key id\x00"))
	h.Write(kek)
	return "k" + hex.EncodeToString(h.Sum(nil)[:8])
}

// StaticKeys is a KeyProvider over keys held in memory: the current key
// and any number of earlier ones, each named by KeyID. A data key is
// wrapped with AES-256-GCM under a random nonce, the context as
// associated data.
type StaticKeys struct {
	current string
	aeads   map[string]cipher.AEAD
}

// NewStaticKeys returns a provider whose current key is current; the
// previous keys still unwrap the data keys of files written under them.
// Every key must be KeySize bytes.
func NewStaticKeys(current []byte, previous ...[]byte) (*StaticKeys, error) {
	s := &StaticKeys{aeads: map[string]cipher.AEAD{}}
	for i, k := range append([][]byte{current}, previous...) {
		if len(k) != KeySize {
			return nil, fmt.Errorf("tablestore: an encryption key must be %d bytes, not %d", KeySize, len(k))
		}
		block, err := aes.NewCipher(k)
		if err != nil {
			return nil, err
		}
		aead, err := cipher.NewGCM(block)
		if err != nil {
			return nil, err
		}
		id := KeyID(k)
		if i == 0 {
			s.current = id
		}
		s.aeads[id] = aead
	}
	return s, nil
}

// CurrentKeyID implements KeyProvider.
func (s *StaticKeys) CurrentKeyID() string { return s.current }

// WrapKey implements KeyProvider.
func (s *StaticKeys) WrapKey(keyID string, dataKey, context []byte) ([]byte, error) {
	aead, ok := s.aeads[keyID]
	if !ok {
		return nil, errUnknownKey
	}
	nonce := make([]byte, aead.NonceSize(), aead.NonceSize()+len(dataKey)+aead.Overhead())
	if _, err := randRead(nonce); err != nil {
		return nil, err
	}
	return aead.Seal(nonce, nonce, dataKey, context), nil
}

// UnwrapKey implements KeyProvider.
func (s *StaticKeys) UnwrapKey(keyID string, wrapped, context []byte) ([]byte, error) {
	aead, ok := s.aeads[keyID]
	if !ok {
		return nil, errUnknownKey
	}
	if len(wrapped) < aead.NonceSize() {
		return nil, fmt.Errorf("%w: wrapped key too short", driver.ErrCorrupt)
	}
	key, err := aead.Open(nil, wrapped[:aead.NonceSize()], wrapped[aead.NonceSize():], context)
	if err != nil {
		// The ID is the key's fingerprint, so the key is right and the
		// header was altered.
		return nil, fmt.Errorf("%w: wrapped data key fails authentication", driver.ErrCorrupt)
	}
	return key, nil
}

// randRead fills keys, IVs and nonces; tests make it deterministic.
var randRead = rand.Read

var errUnknownKey = errors.New("not among the keys given")
