//go:build unix

package azurite

import (
	"os"
	"os/exec"
	"syscall"
)

// interrupt asks the process to shut down.
func interrupt(p *os.Process) error { return p.Signal(syscall.SIGTERM) }

// setProcAttr puts the process in its own process group so that a
// terminal's Ctrl-C reaches the test binary first, which then stops it.
func setProcAttr(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	setDeathSignal(cmd.SysProcAttr)
}
