package command

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/pagodadb/pagoda/cmd/pagoda/internal/cli"

	"github.com/pagodadb/pagoda"
)

func init() { extraCommands = append(extraCommands, newImportCommand) }

func newImportCommand() *cli.Command {
	var csvMode bool
	cmd := &cli.Command{
		Use:   "import FILE TABLE [ROWS.jsonl | ROWS.csv]",
		Short: "Insert rows given as JSON lines into a table or bucket",
		Long: `Insert the rows of ROWS.jsonl (standard input if it is absent or "-")
into TABLE, in one transaction: every row or, after an error, none.

Each line holds one row as scan --json prints it, so that scan --json
output imports back into a table of the same schema; blank lines are
skipped. A row has one value per column, in declared order; the INTEGER
PRIMARY KEY column's value is the row's rowid (null: the next free one).
Each column's affinity applies as in SQLite. A rowid or primary key that
is already in the table is an error.

When there is no table called TABLE, a bucket of that name is created, and
FILE too if it does not exist. Bucket rows are [key, value] pairs, each a
JSON string (its UTF-8 bytes) or {"blob":"<hex>"}; a key already in the
bucket, or on an earlier line, takes the new value, as with put.

A line that is not a row, or that the table refuses, stops the import with
an error naming the line. A progress bar is shown on stderr when stderr is
a terminal. At the end, "imported N rows into TABLE" is printed. Once
that is printed the rows are committed, even if a warning follows (the
checkpoint as the file closes failed: see pagoda --help); the exit status
is then 0.

With --csv the rows are CSV (RFC 4180) instead: see "CSV input" below.

` + jsonHelp + "\n\n" + csvImportHelp,
		Args: cli.RangeArgs(2, 3),
		RunE: func(cmd *cli.Command, args []string) error {
			in, name, size := io.Reader(cmd.InOrStdin()), "stdin", int64(-1)
			if len(args) == 3 && args[2] != "-" {
				f, err := os.Open(args[2])
				if err != nil {
					return err
				}
				defer f.Close()
				in, name = f, args[2]
			}
			if f, ok := in.(*os.File); ok {
				if st, err := f.Stat(); err == nil && st.Mode().IsRegular() {
					size = st.Size() // for the progress bar
				}
			}
			var bar *progress
			if isTerminal(cmd.ErrOrStderr()) {
				bar = newProgress(cmd.ErrOrStderr(), "importing", size)
				in = &progressReader{r: in, bar: bar}
			}
			var n int64
			var table string
			err := update(args[0], true, func(tx *pagoda.Tx) error {
				var err error
				if csvMode {
					table, n, err = importCSV(tx, args[1], in, name)
				} else {
					table, n, err = importRows(tx, args[1], in, name)
				}
				if bar != nil {
					// The commit comes next: the bar goes, whatever the outcome.
					bar.Clear()
				}
				return err
			})
			if err != nil && !committed(err) {
				return err
			}
			if _, perr := fmt.Fprintf(cmd.OutOrStdout(), "imported %d rows into %s\n", n, table); perr != nil {
				return perr
			}
			return err // nil, or a warning: the rows are committed
		},
	}
	cmd.Flags().BoolVar(&csvMode, "csv", false, "the rows are CSV with a header line, as sqlite3's .import --csv reads them")
	return cmd
}

// importRows inserts the rows read from in (called name in errors) into
// the table called table, creating a bucket of that name if there is no
// such table. It returns the table's name as stored and the number of rows.
func importRows(tx *pagoda.Tx, table string, in io.Reader, name string) (string, int64, error) {
	var insert func(row []any) error
	t, err := tx.Table(table)
	switch {
	case errors.Is(err, pagoda.ErrNotFound):
		b, err := tx.CreateBucket(table)
		if err != nil {
			return "", 0, err
		}
		table, insert = b.Name(), bucketInserter(b)
	case err != nil:
		return "", 0, err
	case t.IsBucket():
		b, err := tx.Bucket(t.Name())
		if err != nil {
			return "", 0, err
		}
		table, insert = b.Name(), bucketInserter(b)
	default:
		table, insert = t.Name(), tableInserter(t)
	}
	r := bufio.NewReaderSize(in, 64<<10)
	var line []byte
	var n int64
	for lineNo := 1; ; lineNo++ {
		line, err = readLine(r, line[:0])
		if len(line) == 0 && err == io.EOF {
			return table, n, nil
		}
		if err != nil && err != io.EOF {
			return "", 0, fmt.Errorf("%s: %w", name, err)
		}
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		row, err := decodeRow(line)
		if err == nil {
			err = insert(row)
		}
		if err != nil {
			return "", 0, &cmdError{msg: fmt.Sprintf("%s line %d: %s", name, lineNo, errorText(err)), err: err}
		}
		n++
	}
}

// readLine appends the next line of r, without its "\n", to buf. At the end
// of the input it returns io.EOF, with the last line if it has no "\n".
func readLine(r *bufio.Reader, buf []byte) ([]byte, error) {
	for {
		chunk, err := r.ReadSlice('\n')
		buf = append(buf, chunk...)
		switch err {
		case nil:
			return buf[:len(buf)-1], nil
		case bufio.ErrBufferFull:
			continue
		}
		return buf, err
	}
}

// decodeRow parses one line as a JSON array, keeping numbers as
// json.Number. A line that is not valid UTF-8 is refused, naming the
// column of its first bad byte: encoding/json would store U+FFFD in its
// place, bytes the user never gave.
func decodeRow(line []byte) ([]any, error) {
	if col, ok := firstInvalidUTF8(line); !ok {
		return nil, fmt.Errorf("not JSON: invalid UTF-8 at column %d (byte 0x%02x); "+
			`give bytes that are not UTF-8 text as {"blob":"<hex>"} or {"text_hex":"<hex>"}`, col, line[col-1])
	}
	if col, ok := loneSurrogate(line); !ok {
		return nil, fmt.Errorf("not JSON text: a lone surrogate escape at column %d, which no UTF-8 text holds; "+
			`give such bytes as {"blob":"<hex>"} or {"text_hex":"<hex>"}`, col)
	}
	d := json.NewDecoder(bytes.NewReader(line))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, fmt.Errorf("not JSON: %v", err)
	}
	if _, err := d.Token(); err != io.EOF {
		return nil, errors.New("not JSON: more after the row's array")
	}
	row, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("not a JSON array: %s", jsonKind(v))
	}
	return row, nil
}

// firstInvalidUTF8 returns the 1-based byte column of the first byte of b
// that does not start a valid UTF-8 sequence, and false; or 0 and true
// when b is valid UTF-8.
func firstInvalidUTF8(b []byte) (int, bool) {
	if utf8.Valid(b) {
		return 0, true
	}
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n <= 1 {
			return i + 1, false
		}
		i += n
	}
	return 0, true
}

// loneSurrogate returns the 1-based column of the first \uXXXX escape in
// a JSON string of line that is half of a UTF-16 surrogate pair without
// its other half, and false (encoding/json would decode it as U+FFFD); or
// 0 and true when there is none.
func loneSurrogate(line []byte) (int, bool) {
	hex4 := func(i int) (rune, bool) {
		if i+6 > len(line) || line[i] != '\\' || line[i+1] != 'u' {
			return 0, false
		}
		n, err := strconv.ParseUint(string(line[i+2:i+6]), 16, 16)
		return rune(n), err == nil
	}
	in := false
	for i := 0; i < len(line); i++ {
		switch c := line[i]; {
		case c == '"':
			in = !in
		case c == '\\' && in && i+1 < len(line):
			r, ok := hex4(i)
			switch {
			case !ok:
				i++ // an escaped character
			case r >= 0xd800 && r < 0xdc00:
				if r2, ok := hex4(i + 6); !ok || r2 < 0xdc00 || r2 > 0xdfff {
					return i + 1, false
				}
				i += 11
			case r >= 0xdc00 && r <= 0xdfff:
				return i + 1, false
			default:
				i += 5
			}
		}
	}
	return 0, true
}

// tableInserter returns a function inserting a decoded row into t.
func tableInserter(t *pagoda.Table) func(row []any) error {
	return func(row []any) error {
		for i, x := range row {
			v, err := columnValue(x)
			if err != nil {
				return fmt.Errorf("column %d: %v", i+1, err)
			}
			row[i] = v
		}
		_, err := t.Insert(row...)
		return err
	}
}

// bucketInserter returns a function putting a decoded [key, value] row
// into b.
func bucketInserter(b *pagoda.Bucket) func(row []any) error {
	return func(row []any) error {
		if len(row) != 2 {
			return fmt.Errorf("a bucket row is [key, value], got %d values", len(row))
		}
		k, err := bucketBytes(row[0])
		if err != nil {
			return fmt.Errorf("key: %v", err)
		}
		v, err := bucketBytes(row[1])
		if err != nil {
			return fmt.Errorf("value: %v", err)
		}
		return b.Put(k, v)
	}
}

// columnValue converts a JSON value of a row, in the format of jsonHelp,
// to the Go value Table.Insert takes: nil, int64, float64, string (text)
// or []byte (blob).
func columnValue(x any) (any, error) {
	switch v := x.(type) {
	case nil:
		return nil, nil
	case string:
		return v, nil
	case json.Number:
		return jsonNumber(v)
	case map[string]any:
		b, kind, err := hexObject(v)
		if err != nil {
			return nil, err
		}
		if kind == "text_hex" {
			return string(b), nil
		}
		return b, nil
	}
	return nil, fmt.Errorf("%s is not a column value (null, a number, a string, {\"blob\":hex} or {\"text_hex\":hex})", jsonKind(x))
}

// jsonNumber converts a JSON number: an int64 when it has no fraction and
// no exponent, else a float64. 1e999 and -1e999, which scan --json writes
// for the infinities, read as infinities.
func jsonNumber(s json.Number) (any, error) {
	if !strings.ContainsAny(string(s), ".eE") {
		n, err := strconv.ParseInt(string(s), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("integer %s does not fit in 64 bits", s)
		}
		return n, nil
	}
	f, err := strconv.ParseFloat(string(s), 64)
	if err != nil && !(errors.Is(err, strconv.ErrRange) && math.IsInf(f, 0)) {
		return nil, fmt.Errorf("bad number %s", s)
	}
	return f, nil
}

// bucketBytes converts a bucket key or value: a JSON string (its UTF-8
// bytes), {"blob":hex} or {"text_hex":hex}.
func bucketBytes(x any) ([]byte, error) {
	switch v := x.(type) {
	case string:
		return []byte(v), nil
	case map[string]any:
		b, _, err := hexObject(v)
		return b, err
	}
	return nil, fmt.Errorf("%s is not bytes (a string or {\"blob\":hex})", jsonKind(x))
}

// hexObject decodes {"blob":hex} or {"text_hex":hex}, returning the bytes
// (never nil) and the key.
func hexObject(m map[string]any) ([]byte, string, error) {
	if len(m) == 1 {
		for kind, x := range m {
			s, ok := x.(string)
			if !ok || (kind != "blob" && kind != "text_hex") {
				break
			}
			b, err := hex.DecodeString(s)
			if err != nil {
				return nil, "", fmt.Errorf("%s: %v", kind, err)
			}
			if b == nil {
				b = []byte{} // the empty blob, not NULL
			}
			return b, kind, nil
		}
	}
	return nil, "", errors.New(`an object must be {"blob":"<hex>"} or {"text_hex":"<hex>"}`)
}

// jsonKind names the kind of a decoded JSON value, for errors.
func jsonKind(x any) string {
	switch x.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case json.Number:
		return "a number"
	case string:
		return "a string"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", x)
}

// progressReader advances bar by the bytes read from r.
type progressReader struct {
	r   io.Reader
	bar *progress
}

func (p *progressReader) Read(b []byte) (int, error) {
	n, err := p.r.Read(b)
	p.bar.Add(n)
	return n, err
}
