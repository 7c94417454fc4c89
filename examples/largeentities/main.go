// Command largeentities shows the large entities pattern: a value too big
// for an entity (a 64 KiB property, a 1 MiB entity) is stored as a file
// beside the database, and the entity keeps the file's name, size and
// SHA-256. The file is written and synced before the entity refers to it,
// so a crash can leave an unreferenced file but never a dangling reference.
package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"

	"github.com/tablestore/tablestore"
	"github.com/tablestore/tablestore/examples/internal/demo"
)

// blobStore keeps large values as content-addressed files in one directory.
type blobStore struct{ dir string }

// put writes data durably and returns its name (the hex SHA-256). Writing
// the same data twice is harmless, so a retried step stays idempotent.
func (b blobStore) put(data []byte) (string, error) {
	sum := sha256.Sum256(data)
	name := hex.EncodeToString(sum[:])
	tmp, err := os.CreateTemp(b.dir, "upload-*")
	if err != nil {
		return "", err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return "", err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return "", err
	}
	if err := tmp.Close(); err != nil {
		return "", err
	}
	return name, os.Rename(tmp.Name(), filepath.Join(b.dir, name))
}

// get reads a value back and checks it against the hash in its name.
func (b blobStore) get(name string) ([]byte, bool, error) {
	data, err := os.ReadFile(filepath.Join(b.dir, name))
	sum := sha256.Sum256(data)
	return data, err == nil && hex.EncodeToString(sum[:]) == name, err
}

func photo(size int, seed byte) []byte {
	p := make([]byte, size)
	for i := range p {
		p[i] = byte(i*7) ^ seed
	}
	return p
}

func main() {
	ctx := context.Background()
	root := demo.TempDir()
	db := demo.Reopen(filepath.Join(root, "db"))
	blobs := blobStore{dir: filepath.Join(root, "blobs")}
	demo.NoErr(os.Mkdir(blobs.dir, 0o755), "create blob directory")
	t := demo.CreateTable(ctx, db, "Employees")
	big := photo(3<<20, 0x5a)

	demo.Step("a 3 MiB photo does not fit in an entity")
	err := t.Insert(ctx, &tablestore.Entity{PartitionKey: "Sales", RowKey: "000123", Properties: map[string]any{"Photo": big}})
	demo.WantErr(err, tablestore.ErrPropertyValueTooLarge, "insert the photo as one Binary property")
	chunks := map[string]any{}
	for i := range 20 {
		chunks["Part"+string(rune('A'+i))] = big[i*60_000 : (i+1)*60_000]
	}
	err = t.Insert(ctx, &tablestore.Entity{PartitionKey: "Sales", RowKey: "000123", Properties: chunks})
	demo.WantErr(err, tablestore.ErrEntityTooLarge, "insert 1.2 MB of it as 20 properties")

	demo.Step("store the photo as a file, then the entity that refers to it")
	name, err := blobs.put(big)
	demo.NoErr(err, "write the photo file")
	emp := &tablestore.Entity{PartitionKey: "Sales", RowKey: "000123", Properties: map[string]any{
		"Name": "Mia Jones", "PhotoFile": name, "PhotoSize": int64(len(big))}}
	demo.NoErr(t.Insert(ctx, emp), "insert the employee")
	demo.Say("employee refers to %s... (%d bytes)", name[:16], len(big))

	demo.Step("read: one point read for the entity, one file read for the photo")
	got := demo.Get(ctx, t, "Sales", "000123")
	file, _ := got.Properties["PhotoFile"].(string)
	data, intact, err := blobs.get(file)
	demo.NoErr(err, "read the photo file")
	demo.Check(intact && int64(len(data)) == got.Properties["PhotoSize"], "the photo read back is damaged or of the wrong size")
	demo.Say("photo read back: %d bytes, SHA-256 matches", len(data))

	demo.Step("replace the photo: new file, entity update guarded by its ETag, old file removed")
	newer := photo(2<<20, 0xc3)
	newName, err := blobs.put(newer)
	demo.NoErr(err, "write the new photo")
	demo.NoErr(t.Update(ctx, &tablestore.Entity{PartitionKey: "Sales", RowKey: "000123", Properties: map[string]any{
		"PhotoFile": newName, "PhotoSize": int64(len(newer))}}, tablestore.Merge, got.ETag), "point the entity at the new photo")
	demo.NoErr(os.Remove(filepath.Join(blobs.dir, file)), "remove the old photo")
	got = demo.Get(ctx, t, "Sales", "000123")
	demo.Check(got.Properties["PhotoFile"] == newName && got.Properties["Name"] == "Mia Jones", "entity after update: %v", got.Properties)
	data, intact, err = blobs.get(newName)
	demo.NoErr(err, "read the new photo")
	demo.Check(intact && len(data) == len(newer), "the new photo read back is damaged")
	_, _, err = blobs.get(file)
	demo.Check(os.IsNotExist(err), "the old photo file is still there (err %v)", err)

	demo.Step("delete: the entity first, then its file")
	demo.NoErr(t.Delete(ctx, "Sales", "000123", got.ETag), "delete the employee")
	demo.NoErr(os.Remove(filepath.Join(blobs.dir, newName)), "remove the photo")
	left, err := os.ReadDir(blobs.dir)
	demo.NoErr(err, "list the blob directory")
	demo.Check(len(left) == 0, "%d files left in the blob directory", len(left))
	demo.Say("entity and file are both gone")
	demo.Done()
}
