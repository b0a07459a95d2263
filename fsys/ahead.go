package fsys

import (
	"bytes"
	"io/fs"
	"slices"
	"strings"

	"github.com/pagodadb/pagoda"
	"github.com/pagodadb/pagoda/internal/format"
)

// Reading ahead for walks.
//
// fs.WalkDir lists a directory, then each of its subdirectories in turn,
// depth first. Listed one by one, every name in the archive is read twice:
// once in its own directory's listing, and once more when the parent's
// listing steps over (or seeks past) the subdirectory's subtree. When a
// view lists a directory whose parent it listed before in the same
// snapshot, which is how a walk goes, the listing reads each subdirectory's
// subtree instead of passing it: the subtree is one ordered range of the
// index, so the listings of every directory in it come out of one pass,
// and the walk's next ReadDir calls are served from them.
//
// What is read ahead is bounded (aheadMax entries held per view), served
// once, and dropped when the view's snapshot changes. A listing is kept
// only when the pass read all of its directory's range; a pass that meets
// anything but a well-formed index entry (and, without the listing index,
// a row whose head reads: fillRow) stops, and the listing that needs
// those entries reads them itself.

// aheadMax is how many entries a view holds in listings read ahead: about
// 64 bytes each, and at about 40 ns each the most a listing that goes
// unused can cost.
const aheadMax = 4096

// aheadListed is how many listed directories a view remembers before it
// starts over.
const aheadListed = 1024

// aheadLevel is one directory of the subtree being read: its full name
// with a trailing slash, and its entries so far.
type aheadLevel struct {
	dir    []byte
	names  []byte
	spans  []span
	rows   []row
	sorted bool
}

// add appends an entry to the level's listing.
func (l *aheadLevel) add(name []byte, r row) {
	if n := len(l.spans); n > 0 {
		last := l.spans[n-1]
		if bytes.Compare(l.names[last.off:last.off+last.n], name) > 0 {
			l.sorted = false
		}
	}
	l.spans = append(l.spans, span{len(l.names), len(name)})
	l.names = append(l.names, name...)
	l.rows = append(l.rows, r)
}

// find returns the index of the entry called name, or -1. The names are
// in order but for implicit directories, so the search from the end stops
// at the first smaller name.
func (l *aheadLevel) find(name []byte) int {
	for i := len(l.spans) - 1; i >= 0; i-- {
		sp := l.spans[i]
		switch bytes.Compare(l.names[sp.off:sp.off+sp.n], name) {
		case 0:
			return i
		case -1:
			return -1
		}
	}
	return -1
}

// listedBefore reports whether the view listed full's parent directory
// from the index in this snapshot, and notes full as listed.
func (v *view) listedBefore(full string) bool {
	if v.listed == nil {
		v.listed = make(map[string]struct{})
	}
	parent := ""
	if i := strings.LastIndexByte(full, '/'); i >= 0 {
		parent = full[:i]
	}
	_, ok := v.listed[parent]
	if len(v.listed) >= aheadListed {
		clear(v.listed)
	}
	v.listed[full] = struct{}{}
	return ok && full != ""
}

// forget drops what the view read ahead and what it listed: its snapshot
// is not the one they came from.
func (v *view) forget() {
	clear(v.ahead)
	clear(v.listed)
	v.aheadN = 0
}

// served returns the listing of full read ahead, once.
func (v *view) served(full string) ([]fs.DirEntry, bool) {
	out, ok := v.ahead[full]
	if !ok {
		return nil, false
	}
	delete(v.ahead, full)
	v.aheadN -= len(out)
	list := v.ifaces(len(out))
	for i := range out {
		list[i] = &out[i]
	}
	return list, true
}

// keep stores the listing of directory dir (full name, no trailing slash).
func (v *view) keep(dir []byte, out []dirEntry) {
	if old, ok := v.ahead[string(dir)]; ok {
		v.aheadN -= len(old)
	}
	if v.ahead == nil {
		v.ahead = make(map[string][]dirEntry)
	}
	v.ahead[v.text(dir)] = out
	v.aheadN += len(out)
}

// readAhead reads the subtree of directory dir (its full name and a
// trailing slash) from c, which is on the subtree's first entry, keeping
// the listing of every directory in it. It leaves c on the first entry
// past the subtree and returns whether there is one, as stepping over the
// subtree would.
func (v *view) readAhead(c *pagoda.IndexCursor, dir []byte) bool {
	depth := 0
	v.level(0, dir)
	budget := aheadMax - v.aheadN
	ok := true
	var k key
	for n := 0; ok; {
		if n >= budget || v.decode(c, &k) != nil {
			// Out of budget, or a malformed entry: let the listings of the
			// directories still open read the rest themselves.
			top := v.levels[0].dir
			v.key = append(v.key[:0], top...)
			v.key[len(v.key)-1] = '/' + 1 // the first name after dir/...
			return c.SeekText(v.key)
		}
		if k.kind != format.KindText || !bytes.HasPrefix(k.name, v.levels[0].dir) {
			break // past the subtree
		}
		for !bytes.HasPrefix(k.name, v.levels[depth].dir) {
			v.close(depth)
			depth--
		}
		l := &v.levels[depth]
		rest := k.name[len(l.dir):]
		if i := bytes.IndexByte(rest, '/'); i >= 0 {
			// A name below a child of this level: open the child, unless
			// a listing would not read it (an invalid name, a row that is
			// not a directory): pass its subtree then.
			child := rest[:i]
			open := validElem(child)
			if open {
				switch j := l.find(child); {
				case j < 0:
					l.add(child, row{st: sIFDIR | 0o755})
				case l.rows[j].st&sIFMT != sIFDIR:
					open = false
				}
			}
			if open {
				depth++
				v.level(depth, k.name[:len(l.dir)+i+1])
				continue // the same entry, one level down
			}
			v.key = append(append(v.key[:0], k.name[:len(l.dir)+i]...), '/'+1)
			ok = c.SeekText(v.key)
			continue
		}
		if validElem(rest) {
			if !v.covering {
				// Without the listing index, the row's head (fillRow).
				var e entry
				if v.fillRow(&e, k.rowid) != nil {
					n = budget // stop: the listing that needs it reports it
					continue
				}
				k.st, k.mtime, k.sz = e.st, e.mtime, e.sz
			}
			l.add(rest, row{k.st, k.mtime, k.sz})
		}
		n++
		ok = c.Next()
	}
	for ; depth >= 0; depth-- {
		v.close(depth)
	}
	return ok
}

// level starts level d of a pass, for directory dir (with its slash).
func (v *view) level(d int, dir []byte) {
	if d == len(v.levels) {
		v.levels = append(v.levels, aheadLevel{})
	}
	l := &v.levels[d]
	l.dir = append(l.dir[:0], dir...)
	l.names, l.spans, l.rows, l.sorted = l.names[:0], l.spans[:0], l.rows[:0], true
}

// close keeps the listing of level d, whose range the pass has read, and
// an empty listing for each directory in it that had no entry below.
func (v *view) close(d int) {
	l := &v.levels[d]
	names := v.text(l.names)
	out := v.dirEntries(len(l.spans))
	for i, sp := range l.spans {
		r := l.rows[i]
		e := entry{st: r.st, mtime: r.mtime, sz: r.sz}
		out[i].set(names[sp.off:sp.off+sp.n], &e)
	}
	if !l.sorted {
		slices.SortFunc(out, func(a, b dirEntry) int { return strings.Compare(a.name, b.name) })
	}
	dir := l.dir[len(v.pfx) : len(l.dir)-1] // listings are kept by the FS's names
	v.keep(dir, out)
	for i := range out {
		if !out[i].mode.IsDir() {
			continue
		}
		v.key = append(append(v.key[:0], l.dir[len(v.pfx):]...), out[i].name...)
		if _, ok := v.ahead[string(v.key)]; !ok {
			v.keep(v.key, nil)
		}
	}
}
