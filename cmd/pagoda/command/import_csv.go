package command

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/pagodadb/pagoda"
)

// csvImportHelp documents import --csv.
const csvImportHelp = `CSV input (--csv), as sqlite3's .import --csv reads it:
  - RFC 4180: fields separated by commas, in double quotes when they hold
    commas, quotes (doubled) or line breaks; lines end in LF or CRLF.
  - The first line is a header naming the columns. When there is no table
    called TABLE, one is created as sqlite3 creates it: a TEXT column per
    header field, CREATE TABLE "TABLE"("a" TEXT, "b" TEXT). An existing
    table takes the columns the header names, in any order; the others are
    NULL (the INTEGER PRIMARY KEY: a new rowid). sqlite3 instead reads the
    header of an existing table as a row, unless given --skip 1.
  - Each field is text, converted by its column's affinity as SQLite
    converts it ("42" into an INTEGER column is 42); an empty field is the
    empty string, as sqlite3 stores it, never NULL.
  - A bucket takes a header "key,value" and stores each field's bytes.
  - A line with more or fewer fields than the header is an error.`

// importCSV inserts the CSV rows read from in (called name in errors) into
// the table called table, creating a table of TEXT columns named by the
// header if there is none. It returns the table's name as stored and the
// number of rows.
func importCSV(tx *pagoda.Tx, table string, in io.Reader, name string) (string, int64, error) {
	r := csv.NewReader(in)
	r.FieldsPerRecord = -1 // checked below, with a clearer message
	r.ReuseRecord = true
	header, err := r.Read()
	switch {
	case err == io.EOF:
		return "", 0, fmt.Errorf("%s: no header line", name)
	case err != nil:
		return "", 0, csvError(name, err)
	}
	header = append([]string(nil), header...)
	var insert func(fields []string) error
	t, err := tx.Table(table)
	switch {
	case errors.Is(err, pagoda.ErrNotFound):
		// sqlite3's text: four columns a line.
		var sql strings.Builder
		sql.WriteString(`CREATE TABLE "` + strings.ReplaceAll(table, `"`, `""`) + "\"(\n")
		for i, h := range header {
			switch {
			case i > 0 && i%4 == 0:
				sql.WriteString(",\n ")
			case i > 0:
				sql.WriteString(", ")
			}
			sql.WriteString(`"` + strings.ReplaceAll(h, `"`, `""`) + `" TEXT`)
		}
		sql.WriteString(")")
		t, err = tx.CreateTable(sql.String())
		if err != nil {
			return "", 0, fmt.Errorf("%s: creating table %s from the header: %w", name, table, err)
		}
		insert, err = csvTableInserter(t, header)
	case err != nil:
		return "", 0, err
	case t.IsBucket():
		if len(header) != 2 || !strings.EqualFold(header[0], "key") || !strings.EqualFold(header[1], "value") {
			return "", 0, fmt.Errorf("%s: %s is a bucket: the header must be key,value, not %s", name, t.Name(), strings.Join(header, ","))
		}
		b, err := tx.Bucket(t.Name())
		if err != nil {
			return "", 0, err
		}
		insert = func(f []string) error { return b.Put([]byte(f[0]), []byte(f[1])) }
	default:
		insert, err = csvTableInserter(t, header)
	}
	if err != nil {
		return "", 0, fmt.Errorf("%s: %w", name, err)
	}
	var n int64
	for {
		fields, err := r.Read()
		if err == io.EOF {
			return t.Name(), n, nil
		}
		if err != nil {
			return "", 0, csvError(name, err)
		}
		line, _ := r.FieldPos(0)
		if len(fields) != len(header) {
			return "", 0, fmt.Errorf("%s line %d: %d fields, the header has %d", name, line, len(fields), len(header))
		}
		if err := insert(fields); err != nil {
			return "", 0, &cmdError{msg: fmt.Sprintf("%s line %d: %s", name, line, errorText(err)), err: err}
		}
		n++
	}
}

// csvTableInserter returns a function inserting the fields of a line into
// t, each into the column its header field names.
func csvTableInserter(t *pagoda.Table, header []string) (func([]string) error, error) {
	cols := t.Columns()
	at := make([]int, len(header)) // header field -> column
	for i, h := range header {
		at[i] = -1
		for j, c := range cols {
			if strings.EqualFold(c.Name, h) {
				at[i] = j
			}
		}
		if at[i] < 0 {
			return nil, fmt.Errorf("the header names %q, which is not a column of %s", h, t.Name())
		}
		for _, k := range at[:i] {
			if k == at[i] {
				return nil, fmt.Errorf("the header names column %q twice", h)
			}
		}
	}
	row := make([]any, len(cols))
	return func(fields []string) error {
		clear(row)
		for i, f := range fields {
			row[at[i]] = strings.Clone(f) // the reader reuses its memory
		}
		_, err := t.Insert(row...)
		return err
	}, nil
}

// csvError names the file and line of a CSV syntax error.
func csvError(name string, err error) error {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s line %d, column %d: not CSV: %v", name, pe.Line, pe.Column, pe.Err)
	}
	return fmt.Errorf("%s: %w", name, err)
}
