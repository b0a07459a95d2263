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
// causes (see format.NewRecordReader). The text is UTF-8: for a UTF-16
// database use DecodeEntryEnc.
func DecodeEntry(rec []byte) (Entry, error) { return DecodeEntryEnc(rec, format.TextEncodingUTF8) }

// DecodeEntryEnc is DecodeEntry for a database of text encoding enc
// (header offset 56): the text of a UTF-16 database (its type, name,
// tbl_name and sql) is converted to UTF-8 as SQLite converts it.
func DecodeEntryEnc(rec []byte, enc uint32) (Entry, error) {
	var e Entry
	str := func(v format.Value) string {
		if v.Kind == format.KindText && format.IsUTF16(enc) {
			return string(format.UTF16ToUTF8(nil, v.Bytes, enc))
		}
		return string(v.Bytes)
	}
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
			e.Type = foldKey(str(v)) // SQLite compares it without case
		case ColName:
			e.Name = str(v)
		case ColTblName:
			e.TblName = str(v)
		case ColRootPage:
			if v.Kind == format.KindInt && v.Int() >= 0 && v.Int() <= int64(^uint32(0)) {
				e.RootPage = uint32(v.Int())
			}
		case ColSQL:
			if v.Kind == format.KindText {
				e.SQL, e.HasSQL = str(v), true
			}
		}
	}
}
