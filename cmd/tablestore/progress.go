package main

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// progressEvery is how often the live progress line is redrawn (a
// variable for tests).
var progressEvery = 250 * time.Millisecond

// progress counts the entities and bytes a long operation has handled. On
// a terminal it redraws one live line on standard error: counts, rate and,
// when a total is known, the percentage and time left. Elsewhere it stays
// quiet until the summary. Its counters are safe for concurrent use.
type progress struct {
	w     io.Writer
	live  bool
	width int
	label string
	// totalBytes and totalEntities are 0 when unknown; the ETA comes from
	// bytes when known, else from entities.
	totalBytes int64
	start      time.Time

	entities, bytes, totalEntities atomic.Int64

	stopOnce sync.Once
	stop     chan struct{}
	done     chan struct{}
}

// startProgress starts reporting; call finish exactly once.
func startProgress(io *stdio, label string, totalEntities, totalBytes int64) *progress {
	p := &progress{w: io.stderr, live: io.errTerminal, width: io.errWidth, label: label,
		totalBytes: totalBytes, start: time.Now(),
		stop: make(chan struct{}), done: make(chan struct{})}
	p.totalEntities.Store(totalEntities)
	if p.width <= 0 {
		p.width = 80
	}
	if !p.live {
		close(p.done)
		return p
	}
	go func() {
		defer close(p.done)
		t := time.NewTicker(progressEvery)
		defer t.Stop()
		for {
			select {
			case <-p.stop:
				fmt.Fprint(p.w, "\r\x1b[K")
				return
			case <-t.C:
				line := p.line()
				if len(line) >= p.width {
					line = line[:p.width-1]
				}
				fmt.Fprintf(p.w, "\r%s\x1b[K", line)
			}
		}
	}()
	return p
}

// add counts entities and bytes handled.
func (p *progress) add(entities, bytes int64) {
	p.entities.Add(entities)
	p.bytes.Add(bytes)
}

// set replaces the count of entities handled and their expected total,
// for an operation that reports its own progress (total 0: unknown).
func (p *progress) set(entities, total int64) {
	p.entities.Store(entities)
	p.totalEntities.Store(total)
}

// line is the live progress text.
func (p *progress) line() string {
	el := time.Since(p.start)
	n, b := p.entities.Load(), p.bytes.Load()
	totalEntities := p.totalEntities.Load()
	var s strings.Builder
	fmt.Fprintf(&s, "%s: %s entities", p.label, count(n))
	if totalEntities > 0 {
		fmt.Fprintf(&s, " of %s", count(totalEntities))
	}
	if b > 0 || p.totalBytes > 0 {
		fmt.Fprintf(&s, ", %s", size(b))
		if p.totalBytes > 0 {
			fmt.Fprintf(&s, " of %s", size(p.totalBytes))
		}
	}
	fmt.Fprintf(&s, ", %s entities/s", count(int64(rate(n, el))))
	var frac float64
	switch {
	case p.totalBytes > 0:
		frac = float64(b) / float64(p.totalBytes)
	case totalEntities > 0:
		frac = float64(n) / float64(totalEntities)
	}
	if frac > 0 && frac <= 1 {
		left := time.Duration(float64(el) * (1 - frac) / frac)
		fmt.Fprintf(&s, ", %d%%, %s left", int(frac*100), left.Round(time.Second))
	}
	return s.String()
}

// finish stops the live line and prints the summary line, always.
func (p *progress) finish(summary string) {
	p.stopOnce.Do(func() { close(p.stop) })
	<-p.done
	fmt.Fprintln(p.w, summary)
}

// abort stops the live line and prints nothing, for an operation whose
// error is reported instead of a summary. Call it or finish, once.
func (p *progress) abort() {
	p.stopOnce.Do(func() { close(p.stop) })
	<-p.done
}

// elapsed is the time since the start.
func (p *progress) elapsed() time.Duration { return time.Since(p.start) }

// summary is "N entities, B in D (R entities/s)", without B when no
// bytes were counted.
func (p *progress) summary() string {
	el := p.elapsed()
	n, b := p.entities.Load(), p.bytes.Load()
	bytes := ""
	if b > 0 {
		bytes = ", " + size(b)
	}
	return fmt.Sprintf("%s entities%s in %s (%s entities/s)", count(n), bytes,
		el.Round(time.Millisecond), count(int64(rate(n, el))))
}

func rate(n int64, d time.Duration) float64 {
	if d <= 0 {
		return 0
	}
	return float64(n) / d.Seconds()
}

// count writes n with thousands separators.
func count(n int64) string {
	s := fmt.Sprint(n)
	neg := strings.HasPrefix(s, "-")
	if neg {
		s = s[1:]
	}
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// size writes a byte count in binary units.
func size(b int64) string {
	switch {
	case b >= 1<<30:
		return fmt.Sprintf("%.2f GiB", float64(b)/(1<<30))
	case b >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20))
	case b >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(b)/(1<<10))
	}
	return fmt.Sprintf("%d B", b)
}
