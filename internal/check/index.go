package check

import (
	"cmp"
	"encoding/hex"
	"slices"
	"strconv"
	"strings"

	"github.com/pagodadb/pagoda/internal/btree"
	"github.com/pagodadb/pagoda/internal/expr"
	"github.com/pagodadb/pagoda/internal/format"
	"github.com/pagodadb/pagoda/internal/schema"
)

// The index-entry check (sqlite-format.md §11, #13 and #14). For each table
// whose tree is sound, one scan of its rows computes the key every row must
// have in each of its indexes (sqlite-format.md §6): the indexed columns in
// order, an INTEGER PRIMARY KEY alias reading as the rowid, missing
// trailing fields taking the column's default, then the rowid (rowid
// tables) or the primary key columns not already in the index (WITHOUT
// ROWID tables). The keys of each index are sorted in the index's order and
// merged with an in-order scan of the index: a key without its entry is a
// missing entry, an entry without its key an extra one, and an entry equal
// to its key under the index's collations must also be equal to it field by
// field (a NOCASE index holds the row's own spelling).

// rowidField marks the rowid in indexPlan.cols.
const rowidField = -1

// indexPlan is what checking one index against its table needs.
type indexPlan struct {
	info *schema.IndexInfo
	tree *tree
	cols []int // the table column each key field comes from, rowidField for the rowid
	// skip is set when some row cannot be judged by a partial index's
	// WHERE clause (expr.Where.Takes): the index is then not checked.
	skip bool
	// where is a partial index's WHERE clause: only the rows it takes have
	// entries, counted in rows.
	where *expr.Where
	rows  int64
	arena []byte    // the expected keys, back to back
	keys  []keySpan // where each is in arena, sorted in index order before the merge
}

// keySpan is one expected key: arena[off:off+n], the key of row rowid
// (rowid tables; 0 in WITHOUT ROWID tables).
type keySpan struct {
	off, n int
	rowid  int64
}

func (p *indexPlan) key(k keySpan) []byte { return p.arena[k.off : k.off+k.n] }

// checkIndexes checks every table's rows against its indexes and its CHECK
// constraints (the walk checks NOT NULL and STRICT types: row.go).
func (c *checker) checkIndexes(cat *schema.Catalog) {
	for _, ti := range cat.Tables {
		if c.stopped {
			return
		}
		tt := c.tables[ti]
		if tt == nil || !tt.ok || ti.Table == nil {
			continue
		}
		var plans []*indexPlan
		for _, ii := range ti.Indexes {
			if p := c.planIndex(ti, ii); p != nil {
				plans = append(plans, p)
			}
		}
		checks, err := expr.CompileChecks(ti.Table, c.enc)
		if err != nil {
			checks = nil // one pagoda does not evaluate: none is checked
		}
		if len(plans) == 0 && checks == nil {
			continue
		}
		rows, ok := c.expectedKeys(ti, tt, plans, checks)
		if !ok {
			continue
		}
		for _, p := range plans {
			if !p.skip && !c.stopped {
				c.matchIndex(ti, rows, p)
			}
		}
	}
}

// planIndex returns how to compute ii's keys from rows of ti, or nil when
// the index is not checked: its tree is unsound, or it is an index pagoda
// cannot compute (on expressions, on a VIRTUAL generated column, partial
// with a WHERE clause outside expr's subset).
func (c *checker) planIndex(ti *schema.TableInfo, ii *schema.IndexInfo) *indexPlan {
	it := c.indexes[ii]
	if it == nil || !it.ok || it.kinfo == nil || ii.Err != nil || ii.Index == nil || ii.Index.HasExpr {
		return nil
	}
	t := ti.Table
	p := &indexPlan{info: ii, tree: it}
	if ii.Index.Partial {
		w, err := expr.CompileWhere(ii.Index, t, c.enc)
		if err != nil || w == nil {
			return nil // a WHERE clause pagoda does not evaluate
		}
		p.where = w
	}
	for _, k := range ii.KeyOrder() {
		switch {
		case k.Expr:
			return nil
		case k.Column < 0 || k.Column == t.RowidAlias && !t.WithoutRowID:
			if t.WithoutRowID {
				return nil
			}
			p.cols = append(p.cols, rowidField)
		case k.Column >= len(t.Columns) || t.Columns[k.Column].Hidden:
			return nil
		default:
			p.cols = append(p.cols, k.Column)
		}
	}
	return p
}

// expectedKeys scans the rows of table ti (tree tt) once, appends every
// row's key to each plan (a partial index's only for the rows it takes)
// and reports the rows that fail checks, a CHECK constraint. It returns
// the number of rows; ok is false when a row cannot be read (the problem
// reported).
func (c *checker) expectedKeys(ti *schema.TableInfo, tt *tree, plans []*indexPlan, checks *expr.Checks) (rows int64, ok bool) {
	t := ti.Table
	field := make([]int, len(t.Columns)) // record field of each column, -1 if none
	for i := range field {
		field[i] = -1
	}
	for f, col := range t.RecordOrder {
		if col >= 0 && col < len(field) {
			field[col] = f
		}
	}
	var vals []format.Value
	// The whole row, by column, for CHECK constraints and WHERE clauses;
	// known is rowValues' scratch.
	var row []format.Value
	var known []bool
	whole := checks != nil
	for _, p := range plans {
		whole = whole || p.where != nil
	}
	if whole {
		row, known = make([]format.Value, len(t.Columns)), make([]bool, len(t.Columns))
	}
	var cur btree.Cursor
	cur.Init(c.src, tt.root, tt.table, tt.kinfo)
	for more := cur.First(); more && !c.stopped; more = cur.Next() {
		rowid, rec, pgno, err := cur.Entry()
		if err != nil {
			c.reportf(pgno, "%s: cannot read a row: %s", tt.name, errMsg(err, pgno))
			return rows, false
		}
		if !tt.table {
			rowid = 0
		}
		if end, bad, _ := recordEnd(rec, tt.table, -1); bad != "" || end > int64(len(rec)) {
			// The walk reported it (rowRecord, or entry for a WITHOUT
			// ROWID table, whose tree it leaves unsound).
			return rows, false
		}
		rows++
		if whole {
			c.rowValues(ti, rec, rowid, field, row, known)
		}
		if checks != nil {
			if failed := checks.Failed(row); failed != "" {
				c.reportf(pgno, "%s: %s: CHECK constraint failed: %s", tt.name, rowName(tt, rowid, rec, c.enc), failed)
			}
		}
		for _, p := range plans {
			if p.skip {
				continue
			}
			if p.where != nil {
				in, known := p.where.Takes(row)
				if !known {
					p.skip = true
					continue
				}
				if !in {
					continue
				}
			}
			p.rows++
			vals = vals[:0]
			for _, col := range p.cols {
				vals = append(vals, c.columnValue(ti, rec, rowid, col, field))
			}
			off := len(p.arena)
			p.arena = format.AppendRecord(p.arena, vals)
			p.keys = append(p.keys, keySpan{off: off, n: len(p.arena) - off, rowid: rowid})
		}
	}
	if err := cur.Err(); err != nil {
		c.reportf(0, "%s: cannot read the rows: %s", tt.name, errMsg(err, 0))
		return rows, false
	}
	return rows, !c.stopped
}

// columnValue returns column col of a row (record rec, rowid): the rowid
// for rowidField, the record's field, or, for a field the record lacks, the
// column's default.
func (c *checker) columnValue(ti *schema.TableInfo, rec []byte, rowid int64, col int, field []int) format.Value {
	if col == rowidField {
		return format.IntValue(rowid)
	}
	if f := field[col]; f >= 0 {
		if v, ok := rowField(rec, f); ok {
			return v
		}
	}
	v := c.exprTable(ti).Defaults[col]
	if v.Kind == format.KindText && c.utf16 {
		// The default is UTF-8 (from the schema); keys hold the
		// database's text.
		v = format.TextValue(format.UTF8ToUTF16(nil, v.Bytes, c.enc))
	}
	return v
}

// matchIndex sorts p's expected keys in index order and merges them with
// the index's entries, reporting missing, extra and mismatched entries and
// a wrong entry count.
func (c *checker) matchIndex(ti *schema.TableInfo, rows int64, p *indexPlan) {
	it := p.tree
	slices.SortFunc(p.keys, func(a, b keySpan) int {
		r, _ := format.CompareRecords(p.key(a), p.key(b), it.kinfo)
		if r == 0 {
			r = cmp.Compare(a.rowid, b.rowid)
		}
		return r
	})
	table := "table " + ti.Entry.Name
	row := func(k keySpan) string {
		if ti.Table.WithoutRowID {
			return "a row"
		}
		return "row " + strconv.FormatInt(k.rowid, 10)
	}
	missing := func(k keySpan) {
		c.reportf(it.root, "%s: no entry %s for %s of %s", it.name, formatKey(p.key(k), c.enc), row(k), table)
	}
	var entries int64
	j := 0
	var cur btree.Cursor
	cur.Init(c.src, it.root, false, it.kinfo)
	for more := cur.First(); more && !c.stopped; more = cur.Next() {
		_, entry, pgno, err := cur.Entry()
		if err != nil {
			c.reportf(pgno, "%s: cannot read an entry: %s", it.name, errMsg(err, pgno))
			return
		}
		entries++
		for !c.stopped {
			if j == len(p.keys) {
				c.reportf(pgno, "%s: entry %s matches no row of %s", it.name, formatKey(entry, c.enc), table)
				break
			}
			want := p.key(p.keys[j])
			r, err := format.CompareRecords(want, entry, it.kinfo)
			if err != nil || r > 0 {
				c.reportf(pgno, "%s: entry %s matches no row of %s", it.name, formatKey(entry, c.enc), table)
				break
			}
			if r < 0 {
				missing(p.keys[j])
				j++
				continue
			}
			if !sameRecord(want, entry) {
				c.reportf(pgno, "%s: entry %s differs from %s, the key of %s of %s", it.name, formatKey(entry, c.enc), formatKey(want, c.enc), row(p.keys[j]), table)
			}
			j++
			break
		}
	}
	if err := cur.Err(); err != nil {
		c.reportf(0, "%s: cannot read the entries: %s", it.name, errMsg(err, 0))
		return
	}
	for ; j < len(p.keys) && !c.stopped; j++ {
		missing(p.keys[j])
	}
	switch {
	case p.where != nil && entries != p.rows:
		c.reportf(it.root, "%s has %d entries, %d rows of %s belong in it", it.name, entries, p.rows, table)
	case p.where == nil && entries != rows:
		c.reportf(it.root, "%s has %d entries, %s has %d rows", it.name, entries, table, rows)
	}
}

// sameRecord reports whether two records hold the same values, field by
// field: same storage class and same bytes, numbers by value (an integer
// and a real of equal value are the same, as a REAL column may store either).
func sameRecord(a, b []byte) bool {
	ra, err := format.NewRecordReader(a)
	if err != nil {
		return false
	}
	rb, err := format.NewRecordReader(b)
	if err != nil {
		return false
	}
	for {
		va, oka, erra := ra.Next()
		vb, okb, errb := rb.Next()
		if erra != nil || errb != nil || oka != okb {
			return false
		}
		if !oka {
			return true
		}
		if format.CompareValues(va, vb, format.CollBinary) != 0 {
			return false
		}
	}
}

// rowName names a row for messages: its rowid, or its key.
func rowName(t *tree, rowid int64, rec []byte, enc uint32) string {
	if t.table {
		return "row " + strconv.FormatInt(rowid, 10)
	}
	return "row " + formatKey(rec, enc)
}

// Limits of formatKey's output.
const (
	maxShownFields = 8
	maxShownBytes  = 32
)

// formatKey renders a record for messages as a tuple: (NULL, 1, 2.5,
// "text", x'0a0b'), text quoted with Go escapes so that a message stays on
// one line, long values and records cut short with "...".
func formatKey(rec []byte, enc uint32) string {
	r, err := format.NewRecordReader(rec)
	if err != nil {
		return "(malformed record)"
	}
	var b strings.Builder
	b.WriteByte('(')
	for i := 0; ; i++ {
		v, ok, err := r.Next()
		if err != nil {
			b.WriteString(", malformed")
			break
		}
		if !ok {
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		if i == maxShownFields {
			b.WriteString("...")
			break
		}
		writeValue(&b, v, enc)
	}
	b.WriteByte(')')
	return b.String()
}

// writeValue writes v for a message; the text of a UTF-16 database (enc 2
// or 3) as UTF-8.
func writeValue(b *strings.Builder, v format.Value, enc uint32) {
	switch v.Kind {
	case format.KindNull:
		b.WriteString("NULL")
	case format.KindInt:
		b.WriteString(strconv.FormatInt(v.Int(), 10))
	case format.KindFloat:
		b.WriteString(strconv.FormatFloat(v.Float(), 'g', -1, 64))
	case format.KindText:
		s, more := v.Bytes, ""
		if format.IsUTF16(enc) {
			s = format.UTF16ToUTF8(nil, s, enc)
		}
		if len(s) > maxShownBytes {
			s, more = s[:maxShownBytes], "..."
		}
		b.WriteString(strconv.Quote(string(s))) // escaped: a problem stays on one line
		b.WriteString(more)
	default:
		s, more := v.Bytes, ""
		if len(s) > maxShownBytes {
			s, more = s[:maxShownBytes], "..."
		}
		b.WriteString("x'")
		b.WriteString(hex.EncodeToString(s))
		b.WriteByte('\'')
		b.WriteString(more)
	}
}
