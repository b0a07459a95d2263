package pagoda

import (
	"github.com/pagodadb/pagoda/internal/btree"
	"github.com/pagodadb/pagoda/internal/format"
	"github.com/pagodadb/pagoda/internal/schema"
)

// schemaRoot is the root page of sqlite_schema.
const schemaRoot = 1

// sqlite_schema columns: type, name, tbl_name, rootpage, sql.
const (
	schemaColType = iota
	schemaColName
	schemaColTblName
	schemaColRootPage
	schemaColSQL
)

// readCatalog reads every row of sqlite_schema and builds the catalog.
func readCatalog(s btree.Pages) (*schema.Catalog, error) {
	var c btree.Cursor
	c.Init(s, schemaRoot, true, nil)
	var entries []schema.Entry
	for ok := c.First(); ok; ok = c.Next() {
		rowid, payload, pgno, err := c.Entry()
		if err != nil {
			return nil, err
		}
		var e schema.Entry
		r, err := format.NewRecordReader(payload)
		if err != nil {
			return nil, format.Corruptf(pgno, "sqlite_schema row %d: %s", rowid, corruptMsg(err))
		}
		for i := 0; ; i++ {
			v, ok, err := r.Next()
			if err != nil {
				return nil, format.Corruptf(pgno, "sqlite_schema row %d: %s", rowid, corruptMsg(err))
			}
			if !ok {
				break
			}
			switch i {
			case schemaColType:
				e.Type = string(v.Bytes)
			case schemaColName:
				e.Name = string(v.Bytes)
			case schemaColTblName:
				e.TblName = string(v.Bytes)
			case schemaColRootPage:
				if v.Kind == format.KindInt && v.Int() >= 0 && v.Int() <= int64(^uint32(0)) {
					e.RootPage = uint32(v.Int())
				}
			case schemaColSQL:
				if v.Kind == format.KindText {
					e.SQL, e.HasSQL = string(v.Bytes), true
				}
			}
		}
		entries = append(entries, e)
	}
	if err := c.Err(); err != nil {
		return nil, err
	}
	return schema.Build(entries), nil
}
