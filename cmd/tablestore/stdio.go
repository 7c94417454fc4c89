package main

import (
	"io"
	"os"

	"golang.org/x/term"
)

// stdio is where a command reads and writes, and whether its output and
// error streams are terminals (tests set these to anything).
type stdio struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	// outTerminal selects the human table for query results.
	outTerminal bool
	// errTerminal selects the live progress line; errWidth is its width.
	errTerminal bool
	errWidth    int
}

func newStdio() *stdio {
	s := &stdio{stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr}
	s.outTerminal = term.IsTerminal(int(os.Stdout.Fd()))
	s.errTerminal = term.IsTerminal(int(os.Stderr.Fd()))
	if s.errTerminal {
		if w, _, err := term.GetSize(int(os.Stderr.Fd())); err == nil {
			s.errWidth = w
		}
	}
	return s
}
