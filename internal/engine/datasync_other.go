//go:build !linux

package engine

import "os"

// datasync syncs f (a full sync where fdatasync is not offered).
func datasync(f *os.File) error { return f.Sync() }
