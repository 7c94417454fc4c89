//go:build unix

package main

import (
	"os"
	"syscall"
)

// onOneDevice reports whether paths a and b are both on one device (one
// file system); false when either cannot be looked at.
func onOneDevice(a, b string) bool {
	da, oka := deviceOf(a)
	db, okb := deviceOf(b)
	return oka && okb && da == db
}

func deviceOf(path string) (uint64, bool) {
	fi, err := os.Stat(path)
	if err != nil {
		return 0, false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return uint64(st.Dev), true // Dev's type differs between systems
}
