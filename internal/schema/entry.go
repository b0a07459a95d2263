package schema

import "github.com/pagodadb/pagoda/internal/format"

// The columns of sqlite_schema, in record order: type, name, tbl_name,
// rootpage, sql.
const (
	ColType = iota
	ColName
	ColTblName
	ColRootPage
	ColSQL
)

// DecodeEntry decodes a record of sqlite_schema. A field that is missing,
// or of a type SQLite would not store there (a rootpage that is not an
// integer in 0..2^32-1, an sql that is not text), leaves its field of the
// Entry zero; a malformed record is an error wrapping format.ErrCorrupt's
// causes (see format.NewRecordReader).
func DecodeEntry(rec []byte) (Entry, error) {
	var e Entry
	r, err := format.NewRecordReader(rec)
	if err != nil {
		return e, err
	}
	for i := 0; ; i++ {
		v, ok, err := r.Next()
		if err != nil {
			return e, err
		}
		if !ok {
			return e, nil
		}
		switch i {
		case ColType:
			e.Type = string(v.Bytes)
		case ColName:
			e.Name = string(v.Bytes)
		case ColTblName:
			e.TblName = string(v.Bytes)
		case ColRootPage:
			if v.Kind == format.KindInt && v.Int() >= 0 && v.Int() <= int64(^uint32(0)) {
				e.RootPage = uint32(v.Int())
			}
		case ColSQL:
			if v.Kind == format.KindText {
				e.SQL, e.HasSQL = string(v.Bytes), true
			}
		}
	}
}
