package tablestore_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"

	ts "github.com/tablestore/tablestore"
)

// A store encrypted at rest opens only with its key; without it, Open
// names the key it needs and writes nothing.
func ExampleEncryption() {
	dir, err := os.MkdirTemp("", "example-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	key := bytes.Repeat([]byte{1}, ts.EncryptionKeySize) // in practice, from a file or a KMS
	db, err := ts.Open(dir, &ts.Options{Encryption: &ts.Encryption{Key: key}})
	if err != nil {
		panic(err)
	}
	db.Close()

	_, err = ts.Open(dir, nil)
	var ke *ts.EncryptionKeyError
	if errors.As(err, &ke) {
		fmt.Println("needs key", ke.KeyID, ke.KeyID == ts.EncryptionKeyID(key))
	}
	// Output: needs key k5fe4865e43623c4b true
}
