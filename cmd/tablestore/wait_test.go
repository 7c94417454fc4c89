package main

import (
	"bytes"
	"sync"
	"testing"
	"time"
)

// waitForCondition waits until cond holds, for conditions that announce
// themselves with no event (a file another process writes, a page in a
// browser): it asks again every interval until timeout, and reports
// whether cond held.
func waitForCondition(timeout, interval time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(interval) // sleep: the polling interval of a condition with no event
	}
	return true
}

// watchedBuffer is an io.Writer, safe for concurrent use, that announces
// each write, so a test can wait for output instead of sleeping.
type watchedBuffer struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	wrote chan struct{} // closed and replaced on each write
}

func newWatchedBuffer() *watchedBuffer { return &watchedBuffer{wrote: make(chan struct{})} }

func (b *watchedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	close(b.wrote)
	b.wrote = make(chan struct{})
	return b.buf.Write(p)
}

func (b *watchedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// waitFor waits at most timeout for the text written so far to satisfy
// cond, looking again after each write, and fails t if it does not.
func (b *watchedBuffer) waitFor(t *testing.T, timeout time.Duration, what string, cond func(string) bool) {
	t.Helper()
	deadline := time.After(timeout)
	for {
		b.mu.Lock()
		text, wrote := b.buf.String(), b.wrote
		b.mu.Unlock()
		if cond(text) {
			return
		}
		select {
		case <-wrote:
		case <-deadline:
			t.Fatalf("waited %s for %s; the output:\n%s", timeout, what, text)
		}
	}
}
