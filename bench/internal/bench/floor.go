package bench

import (
	"errors"
	"fmt"
	"os"
	"time"
)

// walStats are the WAL writes of a store that reports them (pagoda).
type walStats struct {
	frames, commits uint64
	pageSize        int
}

// walStatser is a store that counts its WAL writes.
type walStatser interface{ walStats() walStats }

// walStatsOf returns s's WAL counters, zero if it keeps none.
func walStatsOf(s Store) walStats {
	if ws, ok := s.(walStatser); ok {
		return ws.walStats()
	}
	return walStats{}
}

// walFrameHeader is the size of a WAL frame's header (sqlite-format.md §8).
const walFrameHeader = 24

// floor sets res's WAL counters and disk floor from what s wrote since w0
// (nothing for a store that keeps no counters).
func (w *WriteBench) floor(res *WriteResult, s Store, dir string, w0 walStats) error {
	ws, ok := s.(walStatser)
	if !ok {
		return nil
	}
	w1 := ws.walStats()
	res.WALFrames, res.Commits = w1.frames-w0.frames, w1.commits-w0.commits
	if res.Commits == 0 || res.Ops == 0 {
		return nil
	}
	d, err := diskFloor(dir, int64(res.WALFrames)*int64(w1.pageSize+walFrameHeader), int(res.Commits))
	if err != nil {
		return fmt.Errorf("disk floor: %w", err)
	}
	res.FloorNs = float64(d.Nanoseconds()) / float64(res.Ops)
	return nil
}

// diskFloor writes size bytes into a new file in dir, in commits equal
// appends, each followed by one fdatasync (the sync pagoda's commits use),
// and returns the time taken: what the same WAL bytes cost the disk with
// no engine at all. The file is removed.
func diskFloor(dir string, size int64, commits int) (time.Duration, error) {
	f, err := os.CreateTemp(dir, "floor-")
	if err != nil {
		return 0, err
	}
	defer os.Remove(f.Name())
	per := size / int64(commits)
	buf := make([]byte, min(per, 1<<20))
	for i := range buf {
		buf[i] = byte(i * 7)
	}
	start := time.Now()
	var off int64
	for range commits {
		for left := per; left > 0; {
			n := min(left, int64(len(buf)))
			if _, err := f.WriteAt(buf[:n], off); err != nil {
				return 0, errors.Join(err, f.Close())
			}
			off, left = off+n, left-n
		}
		if err := datasync(f); err != nil {
			return 0, errors.Join(err, f.Close())
		}
	}
	d := time.Since(start)
	return d, f.Close()
}
