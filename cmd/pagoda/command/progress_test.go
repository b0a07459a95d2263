package command

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"
)

func TestProgress(t *testing.T) {
	var out bytes.Buffer
	p := newProgress(&out, "adding", 4<<20)
	p.Set64(1 << 20)
	first := out.String()
	if !strings.HasPrefix(first, "\radding  25% [#####               ] 1.0 MiB / 4.0 MiB  ") || !strings.HasSuffix(first, "/s\x1b[K") {
		t.Errorf("first line %q", first)
	}
	p.Set64(2 << 20) // within progressEvery of the first: not drawn
	if out.String() != first {
		t.Errorf("drawn again at once: %q", out.String())
	}
	p.drawn = p.drawn.Add(-progressEvery)
	p.Add(1 << 20)
	if !strings.Contains(out.String(), " 75% [###############     ] 3.0 MiB / 4.0 MiB") {
		t.Errorf("after the pause: %q", out.String())
	}
	p.Clear()
	if !strings.HasSuffix(out.String(), "\r\x1b[K") {
		t.Errorf("Clear wrote %q", out.String())
	}
	n := out.Len()
	p.Clear() // nothing on screen: nothing to erase
	if out.Len() != n {
		t.Error("a second Clear wrote")
	}

	out.Reset()
	u := newProgress(&out, "importing", -1) // unknown size
	u.Write(make([]byte, 1500))
	if !strings.HasPrefix(out.String(), "\rimporting 1.5 KiB  ") {
		t.Errorf("unknown total: %q", out.String())
	}

	w := &failWriter{}
	f := newProgress(w, "x", 10)
	f.Set64(1)
	f.drawn = time.Time{}
	f.Set64(2)
	f.Clear()
	if w.calls != 1 {
		t.Errorf("%d writes after a failed one, want none", w.calls-1)
	}
}

type failWriter struct{ calls int }

func (w *failWriter) Write(p []byte) (int, error) {
	w.calls++
	return 0, errors.New("broken")
}

func TestSizeText(t *testing.T) {
	for n, want := range map[int64]string{0: "0 B", 1023: "1023 B", 1024: "1.0 KiB", 1536: "1.5 KiB", 5 << 20: "5.0 MiB", 3 << 30: "3.0 GiB", 2 << 40: "2.0 TiB"} {
		if got := sizeText(n); got != want {
			t.Errorf("sizeText(%d) = %q, want %q", n, got, want)
		}
	}
}
