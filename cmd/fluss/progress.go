package main

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
)

// progressBar is a line on a terminal redrawn in place (with \r) as an
// import reads its file. A bar that is off draws nothing.
type progressBar struct {
	w     io.Writer
	on    bool
	label string
	total int64 // bytes (or rows) to read; 0 when unknown
	start time.Time
	last  time.Time
	drawn bool
}

// progressEvery is the least time between two redraws: faster would cost
// more than it shows.
const progressEvery = 100 * time.Millisecond

func newProgressBar(w io.Writer, on bool, label string, total int64) *progressBar {
	return &progressBar{w: w, on: on, label: label, total: total, start: time.Now()}
}

// update redraws the bar at done of total (and rows loaded), at most
// every progressEvery.
func (p *progressBar) update(done, rows int64) {
	if !p.on {
		return
	}
	now := time.Now()
	if p.drawn && now.Sub(p.last) < progressEvery {
		return
	}
	p.last, p.drawn = now, true
	io.WriteString(p.w, "\r"+progressLine(p.label, done, p.total, rows, now.Sub(p.start))+"\x1b[K")
}

// finish draws the bar's final state, at done of total, and ends its
// line; a bar never drawn (an import faster than one redraw) stays so.
func (p *progressBar) finish(done, rows int64) {
	if p.on && p.drawn {
		io.WriteString(p.w, "\r"+progressLine(p.label, done, p.total, rows, time.Since(p.start))+"\x1b[K\n")
		p.drawn = false
	}
}

// abandon ends the line of a bar left part-way (an import that failed),
// so that what is written next starts on a line of its own.
func (p *progressBar) abandon() {
	if p.on && p.drawn {
		io.WriteString(p.w, "\n")
		p.drawn = false
	}
}

// progressLine is one drawing of a bar: "label [#####-----]  50%  1200
// rows  1.5s".
func progressLine(label string, done, total, rows int64, took time.Duration) string {
	const width = 30
	frac := 0.0
	if total > 0 {
		frac = min(float64(done)/float64(total), 1)
	}
	fill := int(frac * width)
	return fmt.Sprintf("%s [%s%s] %3d%%  %s  %s", label,
		strings.Repeat("#", fill), strings.Repeat("-", width-fill), int(frac*100),
		plural(rows, "row"), took.Round(100*time.Millisecond))
}

// spin draws a spinner with the elapsed time after label until the
// returned stop is called; it draws nothing unless the error output is a
// terminal. stop clears the line and waits for the spinner to end.
func (s *shell) spin(label string) (stop func()) {
	if !s.errTTY {
		return func() {}
	}
	s.out.Flush()
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		frames := []string{"|", "/", "-", "\\"}
		start := time.Now()
		t := time.NewTicker(progressEvery)
		defer t.Stop()
		for i := 0; ; i++ {
			fmt.Fprintf(s.errOut, "\r%s %s  %s\x1b[K", frames[i%len(frames)], label, time.Since(start).Round(100*time.Millisecond))
			select {
			case <-done:
				io.WriteString(s.errOut, "\r\x1b[K")
				return
			case <-t.C:
			}
		}
	}()
	return func() {
		close(done)
		wg.Wait()
	}
}
