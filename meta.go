package pagoda

import (
	"strings"

	"github.com/pagodadb/pagoda/internal/format"
	"github.com/pagodadb/pagoda/internal/schema"
)

// tableMeta is what reading a table needs beyond its schema, computed once
// per catalog and shared by every transaction that uses it.
type tableMeta struct {
	rec   recordMeta
	kinfo format.KeyInfo // WITHOUT ROWID: PK collations and order
	nKey  int            // WITHOUT ROWID: number of PK fields
}

// indexMeta is the same for an index.
type indexMeta struct {
	rec   recordMeta
	kinfo format.KeyInfo
	aff   []schema.Affinity // affinity of each key field
}

func metaForTable(t *schema.Table) *tableMeta {
	m := &tableMeta{}
	n := len(t.Columns)
	m.rec = recordMeta{
		names:    make([]string, n),
		field:    make([]int, n),
		alias:    -1,
		real:     make([]bool, n),
		defaults: make([]format.Value, n),
	}
	if !t.WithoutRowID {
		m.rec.alias = t.RowidAlias
	}
	for i, c := range t.Columns {
		m.rec.names[i] = c.Name
		m.rec.field[i] = -1
		m.rec.real[i] = c.Affinity == schema.AffinityReal
		if c.HasDefault {
			m.rec.defaults[i] = applyAffinity(defaultValue(c.Default), c.Affinity)
		}
	}
	for f, col := range t.RecordOrder {
		if col >= 0 && col < n {
			m.rec.field[col] = f
		}
	}
	if t.WithoutRowID {
		m.nKey = len(t.PrimaryKey)
		for _, pk := range t.PrimaryKey {
			m.kinfo.Colls = append(m.kinfo.Colls, format.Collation(pk.Collation))
			m.kinfo.Desc = append(m.kinfo.Desc, pk.Desc)
		}
	}
	return m
}

// metaForIndex describes the key records of index ix on table t: the
// indexed columns, then the rowid (rowid tables) or the primary key columns
// not already indexed (WITHOUT ROWID tables).
func metaForIndex(ix *schema.Index, t *schema.Table) *indexMeta {
	m := &indexMeta{rec: recordMeta{alias: -1}}
	add := func(name string, coll schema.Collation, desc bool, aff schema.Affinity) {
		f := len(m.rec.names)
		m.rec.names = append(m.rec.names, name)
		m.rec.field = append(m.rec.field, f)
		m.rec.real = append(m.rec.real, aff == schema.AffinityReal)
		m.rec.defaults = append(m.rec.defaults, format.Value{})
		m.kinfo.Colls = append(m.kinfo.Colls, format.Collation(coll))
		m.kinfo.Desc = append(m.kinfo.Desc, desc)
		m.aff = append(m.aff, aff)
	}
	affOf := func(col int) schema.Affinity {
		if col >= 0 && col < len(t.Columns) {
			return t.Columns[col].Affinity
		}
		return schema.AffinityBlob
	}
	for _, c := range ix.Columns {
		add(c.Name, c.Collation, c.Desc, affOf(c.Column))
	}
	if !t.WithoutRowID {
		add("rowid", schema.CollBinary, false, schema.AffinityInteger)
		return m
	}
	// The primary key columns not already a term with the same collation
	// (sqlite3's isDupColumn compares collations too), ascending in an
	// automatic index: schema's KeyOrder knows the rules.
	for _, pk := range ix.KeyOrder(t)[len(ix.Columns):] {
		add(pk.Name, pk.Collation, pk.Desc, affOf(pk.Column))
	}
	return m
}

// defaultValue evaluates the literal forms of a DEFAULT clause: numbers,
// strings, blobs, NULL, TRUE and FALSE. Expressions evaluate to NULL.
func defaultValue(s string) format.Value {
	s = strings.TrimSpace(s)
	for len(s) >= 2 && s[0] == '(' && s[len(s)-1] == ')' {
		s = strings.TrimSpace(s[1 : len(s)-1])
	}
	switch u := strings.ToUpper(s); {
	case u == "NULL" || u == "":
		return format.NullValue()
	case u == "TRUE":
		return format.IntValue(1)
	case u == "FALSE":
		return format.IntValue(0)
	case len(s) >= 2 && s[0] == '\'' && s[len(s)-1] == '\'':
		return format.TextValue([]byte(strings.ReplaceAll(s[1:len(s)-1], "''", "'")))
	case len(s) >= 3 && (s[0] == 'x' || s[0] == 'X') && s[1] == '\'' && s[len(s)-1] == '\'':
		b, ok := decodeHex(s[2 : len(s)-1])
		if ok {
			return format.BlobValue(b)
		}
	}
	if v, ok := parseNumber(s); ok {
		return v
	}
	return format.NullValue()
}

func decodeHex(s string) ([]byte, bool) {
	if len(s)%2 != 0 {
		return nil, false
	}
	b := make([]byte, len(s)/2)
	for i := range b {
		hi, ok1 := hexDigit(s[2*i])
		lo, ok2 := hexDigit(s[2*i+1])
		if !ok1 || !ok2 {
			return nil, false
		}
		b[i] = hi<<4 | lo
	}
	return b, true
}

func hexDigit(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}
