//go:build unix && !linux

package azurite

import "syscall"

func setDeathSignal(*syscall.SysProcAttr) {}
