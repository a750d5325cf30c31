package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// progressBar is the part of github.com/schollz/progressbar/v3's
// *ProgressBar that bench uses (Add, Set, Finish), so that switching to it
// is a change of constructor only. The module is not required by go.mod
// today (see docs/benchmarks.md), so textBar draws the bar meanwhile.
type progressBar interface {
	Add(n int) error
	Set(n int) error
	Finish() error
}

// textBar draws "label [=====>    ] 1234/5000 (24%) 2345/s 5.1s" on w every
// 200 ms: in place on a terminal, one line every 2 s otherwise.
type textBar struct {
	w     io.Writer
	label string
	total int64
	start time.Time
	tty   bool

	cur  atomic.Int64
	once sync.Once
	stop chan struct{}
	done chan struct{}
}

func newBar(w io.Writer, label string, total int) *textBar {
	b := &textBar{w: w, label: label, total: int64(total), start: time.Now(), tty: isTerminal(w),
		stop: make(chan struct{}), done: make(chan struct{})}
	go b.loop()
	return b
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

func (b *textBar) Add(n int) error { b.cur.Add(int64(n)); return nil }
func (b *textBar) Set(n int) error { b.cur.Store(int64(n)); return nil }

// Finish draws the final state and ends the line.
func (b *textBar) Finish() error {
	b.once.Do(func() { close(b.stop) })
	<-b.done
	return nil
}

func (b *textBar) loop() {
	defer close(b.done)
	every := 200 * time.Millisecond
	if !b.tty {
		every = 2 * time.Second
	}
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-b.stop:
			b.draw(true)
			return
		case <-tick.C:
			b.draw(false)
		}
	}
}

func (b *textBar) draw(final bool) {
	cur, elapsed := b.cur.Load(), time.Since(b.start)
	const width = 30
	filled := int(int64(width) * min(cur, b.total) / max(b.total, 1))
	bar := strings.Repeat("=", filled) + strings.Repeat(" ", width-filled)
	if filled > 0 && filled < width {
		bar = bar[:filled-1] + ">" + bar[filled:]
	}
	rate := float64(cur) / max(elapsed.Seconds(), 1e-9)
	line := fmt.Sprintf("%-8s [%s] %d/%d (%d%%) %.0f/s %.1fs", b.label, bar, cur, b.total,
		100*cur/max(b.total, 1), rate, elapsed.Seconds())
	switch {
	case b.tty && final:
		fmt.Fprintf(b.w, "\r%s\n", line)
	case b.tty:
		fmt.Fprintf(b.w, "\r%s", line)
	default:
		fmt.Fprintln(b.w, line)
	}
}
