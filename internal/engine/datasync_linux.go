package engine

import (
	"os"
	"syscall"
)

// datasync syncs f's data, and of its metadata only what reading the
// data back needs (fdatasync).
func datasync(f *os.File) error {
	for {
		err := syscall.Fdatasync(int(f.Fd()))
		if err != syscall.EINTR {
			return err
		}
	}
}
