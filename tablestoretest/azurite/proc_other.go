//go:build !unix

package azurite

import (
	"os"
	"os/exec"
)

func interrupt(p *os.Process) error { return p.Kill() }

func setProcAttr(*exec.Cmd) {}
