package check

import (
	"encoding/binary"
	"math"
	"strings"

	"github.com/pagodadb/pagoda/internal/format"
	"github.com/pagodadb/pagoda/internal/schema"
)

// The row checks of sqlite3's integrity_check (src/pragma.c), made on each
// row as the walk meets it (fieldRules), from the serial types of its
// record alone: a NOT NULL column holds no NULL ("NULL value in t.c"); in
// a STRICT table a column of a type other than ANY holds NULL or a value of
// its type, a REAL column integers too ("non-INTEGER value in t.c", the
// type named as declared: INT, INTEGER, REAL, TEXT or BLOB). The rowid
// alias is not checked (it is the rowid), nor a VIRTUAL generated column
// (pagoda does not compute it). A row stored before ALTER TABLE ADD COLUMN
// takes the column's DEFAULT (Options.Default): sqlite3 accepts a DEFAULT
// of another type than a STRICT column's, and reports every such row.
// CHECK constraints need the row's values: expectedKeys checks them.

// rowRules is what every row of a table must satisfy, field by field.
type rowRules struct {
	table  string      // the table's name, for messages
	fields []fieldRule // by record field (Table.RecordOrder)
}

// fieldRule is what one field of a row must hold.
type fieldRule struct {
	column  string // the column's name
	notNull bool
	typ     string // the STRICT type in upper case, "" for none or ANY
	// dflt is the storage class of the column's value in a row whose
	// record lacks the field; dfltKnown is false when it is unknown (a
	// DEFAULT and no Options.Default): such rows are not checked.
	dflt      format.Kind
	dfltKnown bool
}

// rowRules returns the rules of table ti's rows, nil when there are none
// (no NOT NULL column, not STRICT or only ANY columns).
func (c *checker) rowRules(ti *schema.TableInfo) *rowRules {
	t := ti.Table
	if t == nil {
		return nil
	}
	r := &rowRules{table: ti.Entry.Name, fields: make([]fieldRule, len(t.RecordOrder))}
	some := false
	for f, col := range t.RecordOrder {
		if col < 0 || col >= len(t.Columns) || col == t.RowidAlias && !t.WithoutRowID {
			continue
		}
		cl := &t.Columns[col]
		rule := fieldRule{column: cl.Name, notNull: cl.NotNull, dfltKnown: true}
		if t.Strict {
			if rule.typ = strings.ToUpper(cl.Type); rule.typ == "ANY" {
				rule.typ = ""
			}
		}
		if !rule.notNull && rule.typ == "" {
			continue
		}
		switch {
		case c.deflt != nil:
			rule.dflt = c.deflt(ti, col).Kind
		case cl.HasDefault:
			rule.dfltKnown = false
		}
		r.fields[f], some = rule, true
	}
	if !some {
		return nil
	}
	return r
}

// checkFields checks the fields of a row of tree t (record rec, sound, as
// rowRecord or CheckRecord found it; rowid in a rowid table) on page pgno
// against t.rules.
func (c *checker) checkFields(t *tree, pgno uint32, rowid int64, rec []byte) {
	h, pos := format.Uvarint(rec)
	hdr, off := rec[:h], int(h)
	for f := range t.rules.fields {
		rule := &t.rules.fields[f]
		var k format.Kind
		if pos < len(hdr) {
			st, size, next, ok := format.ShortSerial(hdr, pos)
			if !ok {
				var n int
				st, n = format.Uvarint(hdr[pos:])
				s, _ := format.SerialTypeSize(st)
				size, next = int(s), pos+n
			}
			k = serialKind(st, rec[off:off+size])
			off, pos = off+size, next
		} else if rule.dfltKnown {
			k = rule.dflt
		} else {
			continue
		}
		switch {
		case k == format.KindNull:
			if rule.notNull {
				c.reportf(pgno, "%s: %s: NULL value in %s.%s", t.name, rowName(t, rowid, rec), t.rules.table, rule.column)
			}
		case rule.typ != "" && !schema.StrictAccepts(rule.typ, k):
			c.reportf(pgno, "%s: %s: non-%s value in %s.%s (%s)", t.name, rowName(t, rowid, rec), rule.typ, t.rules.table, rule.column, k)
		}
	}
}

// serialKind is the storage class of a field of serial type st (not
// reserved) and body body: a NaN reads as NULL (format.DecodeValue).
func serialKind(st uint64, body []byte) format.Kind {
	switch {
	case st == 0:
		return format.KindNull
	case st == 7:
		if len(body) == 8 && math.IsNaN(math.Float64frombits(binary.BigEndian.Uint64(body))) {
			return format.KindNull
		}
		return format.KindFloat
	case st < 12:
		return format.KindInt
	case st&1 == 0:
		return format.KindBlob
	}
	return format.KindText
}

// rowValues sets row[col] to the value of every column of a row (record
// rec, checked, and rowid) in one pass over the record: the record's field,
// the rowid for the rowid alias, else the column's default (columnValue).
// It reports whether every column is known (columnValue).
func (c *checker) rowValues(ti *schema.TableInfo, rec []byte, rowid int64, field []int, row []format.Value, known []bool) (all bool) {
	t := ti.Table
	clear(known)
	if r, err := format.NewRecordReader(rec); err == nil {
		for _, col := range t.RecordOrder {
			v, ok, err := r.Next()
			if !ok || err != nil {
				break
			}
			if col >= 0 && col < len(row) {
				row[col], known[col] = v, true
			}
		}
	}
	if a := t.RowidAlias; a >= 0 && a < len(row) && !t.WithoutRowID {
		row[a], known[a] = format.IntValue(rowid), true
	}
	all = true
	for col := range row {
		if !known[col] {
			row[col], known[col] = c.columnValue(ti, rec, rowid, col, field)
			all = all && known[col]
		}
	}
	return all
}
