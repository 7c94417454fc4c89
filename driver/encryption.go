package driver

import (
	"errors"
	"fmt"
)

// ErrEncryptionKey is matched by the error of opening an encrypted store
// without the key it needs (no key, or a key with another ID), and of
// opening an unencrypted store with a key. See EncryptionKeyError.
var ErrEncryptionKey = errors.New("tablestore: encryption key")

// EncryptionKeyError says which key-encryption key a file needs. Opening
// a store that fails with it has written nothing.
type EncryptionKeyError struct {
	// KeyID names the key the file is wrapped under; "" when the file is
	// not encrypted and a key was given.
	KeyID string
	// File is the path of the file that needs the key.
	File string
	// Given names the current key of those given, when keys were given
	// but none of them opens the file.
	Given string
	// Err is the key provider's error, if it gave one.
	Err error
}

func (e *EncryptionKeyError) Error() string {
	if e.KeyID == "" {
		return fmt.Sprintf("tablestore: %s is not encrypted, but an encryption key was given (convert the store with tablestore encrypt, or open it without a key)", e.File)
	}
	msg := fmt.Sprintf("tablestore: %s needs encryption key %q, which was not given", e.File, e.KeyID)
	if e.Given != "" {
		msg = fmt.Sprintf("tablestore: %s needs encryption key %q; another key was given (%q)", e.File, e.KeyID, e.Given)
	}
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

// Unwrap returns ErrEncryptionKey and the provider's error.
func (e *EncryptionKeyError) Unwrap() []error {
	if e.Err == nil {
		return []error{ErrEncryptionKey}
	}
	return []error{ErrEncryptionKey, e.Err}
}
