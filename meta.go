package pagoda

import (
	"github.com/pagodadb/pagoda/internal/expr"
	"github.com/pagodadb/pagoda/internal/format"
	"github.com/pagodadb/pagoda/internal/schema"
)

// tableMeta is what reading a table needs beyond its schema, computed once
// per catalog and shared by every transaction that uses it.
type tableMeta struct {
	rec   recordMeta
	kinfo format.KeyInfo // WITHOUT ROWID: PK collations and order
	nKey  int            // WITHOUT ROWID: number of PK fields
	plan  *writePlan     // built by the first write (db.mu guards it)
}

// indexMeta is the same for an index.
type indexMeta struct {
	rec   recordMeta
	kinfo format.KeyInfo
	aff   []schema.Affinity // affinity of each key field
}

// metaForTable describes the rows of table ti of a database whose text
// encoding is enc (header offset 56).
func metaForTable(ti *schema.TableInfo, enc uint32) *tableMeta {
	t := ti.Table
	tbl := expr.NewTable(ti, enc)
	m := &tableMeta{}
	m.rec = recordMeta{
		Layout: tbl.Layout,
		owner:  tbl.Owner,
		root:   ti.Entry.RootPage,
		names:  make([]string, len(t.Columns)),
		tbl:    tbl,
	}
	for i, c := range t.Columns {
		m.rec.names[i] = c.Name
	}
	m.rec.setFast()
	m.rec.setEncoding(enc)
	if t.WithoutRowID {
		m.nKey = len(t.PrimaryKey)
		for _, pk := range t.PrimaryKey {
			m.kinfo.Colls = append(m.kinfo.Colls, format.Collation(pk.Collation).ForEncoding(enc))
			m.kinfo.Desc = append(m.kinfo.Desc, pk.Desc)
		}
		m.kinfo.Other = schema.OtherCollation(t.PrimaryKey) // its rows read in order; no key is sought
	}
	return m
}

// metaForIndex describes the key records of index ix on table t: the
// indexed columns, then the rowid (rowid tables) or the primary key columns
// not already indexed (WITHOUT ROWID tables), in a database of text
// encoding enc.
func metaForIndex(ii *schema.IndexInfo, enc uint32) *indexMeta {
	ix, t := ii.Index, ii.Table.Table
	m := &indexMeta{rec: recordMeta{Layout: expr.Layout{Alias: -1}, owner: "index " + ii.Entry.Name, root: ii.Entry.RootPage}}
	add := func(name string, coll schema.Collation, desc bool, aff schema.Affinity) {
		f := len(m.rec.names)
		m.rec.names = append(m.rec.names, name)
		m.rec.Field = append(m.rec.Field, f)
		m.rec.fast = append(m.rec.fast, f)
		m.rec.Real = append(m.rec.Real, aff == schema.AffinityReal)
		m.rec.Defaults = append(m.rec.Defaults, format.Value{})
		m.kinfo.Colls = append(m.kinfo.Colls, format.Collation(coll).ForEncoding(enc))
		m.kinfo.Desc = append(m.kinfo.Desc, desc)
		m.aff = append(m.aff, aff)
	}
	affOf := func(col int) schema.Affinity {
		if col >= 0 && col < len(t.Columns) {
			return t.Columns[col].Affinity
		}
		return schema.AffinityBlob
	}
	// An application-defined collation: the entries read in order, no key
	// is sought.
	m.kinfo.Other = schema.OtherCollation(ix.KeyOrder(t))
	for _, c := range ix.Columns {
		add(c.Name, c.Collation, c.Desc, affOf(c.Column))
	}
	if !t.WithoutRowID {
		add("rowid", schema.CollBinary, false, schema.AffinityInteger)
	} else {
		// The primary key columns not already a term with the same
		// collation (sqlite3's isDupColumn compares collations too),
		// ascending in an automatic index: schema's KeyOrder knows the
		// rules.
		for _, pk := range ix.KeyOrder(t)[len(ix.Columns):] {
			add(pk.Name, pk.Collation, pk.Desc, affOf(pk.Column))
		}
	}
	m.rec.setEncoding(enc)
	return m
}

// setFast sets fast from field and alias.
func (m *recordMeta) setFast() {
	m.fast = make([]int, len(m.Field))
	for i, f := range m.Field {
		if i == m.Alias {
			f = -1
		}
		m.fast[i] = f
	}
}

// setEncoding records that the text of the records is in encoding enc.
// UTF-16 text is converted to UTF-8 as it is read, by Column's general
// path: every column goes that way, so that the fast path, which returns
// slices of the page, stays as it is for UTF-8 databases.
func (m *recordMeta) setEncoding(enc uint32) {
	if !format.IsUTF16(enc) {
		return
	}
	m.Enc = enc
	for i := range m.fast {
		m.fast[i] = -1
	}
}
