//go:build linux

package azurite

import "syscall"

// setDeathSignal kills the process when the thread that started it (and
// so the test binary) dies without calling Close.
func setDeathSignal(a *syscall.SysProcAttr) { a.Pdeathsig = syscall.SIGKILL }
