package encfs

import (
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// BenchmarkReadAt reads 4 KiB blocks, Pebble's default block size, at
// scattered offsets of a 1 MiB file, plain and encrypted.
func BenchmarkReadAt(b *testing.B) {
	for _, enc := range []bool{false, true} {
		name := "plain"
		if enc {
			name = "encrypted"
		}
		b.Run(name, func(b *testing.B) {
			mem := vfs.NewMem()
			var fs vfs.FS = mem
			if enc {
				fs = New(mem, staticKeys(b, testKey(b, 1)))
			}
			f, err := fs.Create("f", vfs.WriteCategoryUnspecified)
			if err != nil {
				b.Fatal(err)
			}
			f.Write(make([]byte, 1<<20))
			f.Close()
			r, err := fs.Open("f")
			if err != nil {
				b.Fatal(err)
			}
			defer r.Close()
			buf := make([]byte, 4096)
			b.SetBytes(4096)
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				if _, err := r.ReadAt(buf, int64((i*7919)%250)*4096+17); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
