package command

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"golang.org/x/term"
)

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// progress is a one-line progress report for a terminal, redrawn in place
// at most every progressEvery:
//
//	importing  42% [########            ]  12.3 MiB / 29.0 MiB  4.1 MiB/s
//
// A total of -1 (unknown) shows the bytes and the rate only. Clear erases
// the line; a command clears it before it prints anything else.
type progress struct {
	w      io.Writer
	what   string
	total  int64
	done   int64
	start  time.Time
	drawn  time.Time // when the line was last drawn; zero: not on screen
	buf    []byte
	failed bool // a write to w failed: stop drawing
}

const (
	progressEvery = 100 * time.Millisecond
	progressWidth = 20 // characters of the bar
)

func newProgress(w io.Writer, what string, total int64) *progress {
	return &progress{w: w, what: what, total: total, start: time.Now()}
}

// Set64 sets the bytes done.
func (p *progress) Set64(n int64) {
	p.done = n
	p.draw()
}

// Add adds n bytes done.
func (p *progress) Add(n int) {
	p.done += int64(n)
	p.draw()
}

// Write counts p's length as done, so that a progress can be a
// destination of io.MultiWriter.
func (p *progress) Write(b []byte) (int, error) {
	p.Add(len(b))
	return len(b), nil
}

func (p *progress) draw() {
	now := time.Now()
	if p.failed || (!p.drawn.IsZero() && now.Sub(p.drawn) < progressEvery) {
		return
	}
	p.drawn = now
	b := append(p.buf[:0], "\r"...)
	b = append(b, p.what...)
	if p.total > 0 {
		frac := min(float64(p.done)/float64(p.total), 1)
		full := int(frac * progressWidth)
		b = fmt.Appendf(b, " %3d%% [%s%s] %s / %s", int(frac*100), strings.Repeat("#", full), strings.Repeat(" ", progressWidth-full), sizeText(p.done), sizeText(p.total))
	} else {
		b = fmt.Appendf(b, " %s", sizeText(p.done))
	}
	if secs := now.Sub(p.start).Seconds(); secs > 0 {
		b = fmt.Appendf(b, "  %s/s", sizeText(int64(float64(p.done)/secs)))
	}
	b = append(b, "\x1b[K"...) // erase what a longer line left
	p.buf = b
	if _, err := p.w.Write(b); err != nil {
		p.failed = true
	}
}

// Clear erases the line, if it is drawn.
func (p *progress) Clear() {
	if !p.drawn.IsZero() && !p.failed {
		io.WriteString(p.w, "\r\x1b[K")
	}
	p.drawn = time.Time{}
}

// sizeText prints n bytes as "512 B", "12.3 KiB", "4.0 MiB", "1.2 GiB".
func sizeText(n int64) string {
	if n < 1024 {
		return fmt.Sprintf("%d B", n)
	}
	f, unit := float64(n)/1024, "KiB"
	for _, u := range []string{"MiB", "GiB", "TiB"} {
		if f < 1024 {
			break
		}
		f, unit = f/1024, u
	}
	return fmt.Sprintf("%.1f %s", f, unit)
}
