package pagoda

import (
	"github.com/pagodadb/pagoda/internal/btree"
	"github.com/pagodadb/pagoda/internal/format"
	"github.com/pagodadb/pagoda/internal/schema"
)

// schemaRoot is the root page of sqlite_schema.
const schemaRoot = 1

// readCatalog reads every row of sqlite_schema and builds the catalog (its
// text converted to UTF-8 in a UTF-16 database).
func readCatalog(s btree.Pages) (*schema.Catalog, error) {
	pg1, err := s.Page(1)
	if err != nil {
		return nil, err
	}
	enc := format.Header(pg1).TextEncoding()
	var c btree.Cursor
	c.Init(s, schemaRoot, true, nil)
	var entries []schema.Entry
	for ok := c.First(); ok; ok = c.Next() {
		rowid, payload, pgno, err := c.Entry()
		if err != nil {
			return nil, err
		}
		e, err := schema.DecodeEntryEnc(payload, enc)
		if err != nil {
			return nil, format.Corruptf(pgno, "sqlite_schema row %d: %s", rowid, corruptMsg(err))
		}
		entries = append(entries, e)
	}
	if err := c.Err(); err != nil {
		return nil, err
	}
	cat := schema.BuildFormat(entries, format.Header(pg1).SchemaFormat())
	cat.TextEncoding = enc
	return cat, nil
}
