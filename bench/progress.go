package main

import (
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// stderr receives progress lines and warnings.
var stderr io.Writer = os.Stderr

// progress reports a long step on stderr every interval: items done,
// rate and estimated time left. Add is safe for concurrent use.
type progress struct {
	label string
	unit  string
	total int64 // 0 when unknown
	done  atomic.Int64
	start time.Time
	stop  chan struct{}
	wg    sync.WaitGroup
}

// progressInterval is how often progress lines are printed.
const progressInterval = 2 * time.Second

// startProgress starts reporting; call finish when the step ends.
func startProgress(label, unit string, total int) *progress {
	p := &progress{label: label, unit: unit, total: int64(total), start: time.Now(), stop: make(chan struct{})}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		t := time.NewTicker(progressInterval)
		defer t.Stop()
		for {
			select {
			case <-p.stop:
				return
			case <-t.C:
				p.print()
			}
		}
	}()
	return p
}

func (p *progress) add(n int) { p.done.Add(int64(n)) }

func (p *progress) print() {
	done := p.done.Load()
	el := time.Since(p.start)
	rate := float64(done) / el.Seconds()
	line := fmt.Sprintf("  %s: %s %s in %s, %s/s", p.label, commas(float64(done)), p.unit,
		el.Round(100*time.Millisecond), commas(rate))
	if p.total > 0 {
		line = fmt.Sprintf("  %s: %s/%s %s, %s/s", p.label, commas(float64(done)), commas(float64(p.total)),
			p.unit, commas(rate))
		if rate > 0 && done < p.total {
			left := time.Duration(float64(p.total-done) / rate * float64(time.Second))
			line += fmt.Sprintf(", ~%s left", left.Round(time.Second))
		}
	}
	fmt.Fprintln(stderr, line)
}

// finish stops reporting.
func (p *progress) finish() {
	close(p.stop)
	p.wg.Wait()
}

// logf prints one status line on stderr.
func logf(format string, args ...any) {
	fmt.Fprintf(stderr, format+"\n", args...)
}
