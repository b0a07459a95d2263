package pagoda

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/pagodadb/pagoda/internal/format"
	"github.com/pagodadb/pagoda/internal/sqltest"
)

// damagedKeyFile writes, with SQLite, WITHOUT ROWID table w (root page 2)
// of keys key00001 to key00005, then sets the header length byte of key's
// record to hdr.
func damagedKeyFile(t *testing.T, key string, hdr byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "w.db")
	stmts := []string{"CREATE TABLE w(k TEXT PRIMARY KEY, v INTEGER) WITHOUT ROWID"}
	for i := 1; i <= 5; i++ {
		stmts = append(stmts, fmt.Sprintf("INSERT INTO w VALUES ('key0000%d', %d)", i, i))
	}
	sqltest.Exec(t, path, stmts...)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// The record: header 3 bytes (TEXT of 8, an 8-bit integer), the key.
	i := bytes.Index(data, append([]byte{3, 29, 1}, key...))
	if i < 0 {
		t.Fatalf("%s's record is not in the file", key)
	}
	data[i] = hdr
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestGetKeyShortRow: a WITHOUT ROWID row whose record was cut to no
// fields (damage) matches no key: GetKey returns the row sought or an
// error wrapping ErrCorrupt, never the damaged row in its place.
func TestGetKeyShortRow(t *testing.T) {
	path := damagedKeyFile(t, "key00002", 1) // a header of its own length byte alone: no fields
	_, tx, w := readTable(t, path, nil, "w")
	corrupt := 0
	for i := 1; i <= 6; i++ {
		key := fmt.Sprintf("key0000%d", i)
		rec, err := w.GetKey(key)
		switch {
		case errors.Is(err, ErrCorrupt):
			corrupt++
		case errors.Is(err, ErrNotFound) && i == 6:
		case err != nil:
			t.Errorf("GetKey(%s): %v", key, err)
		case string(rec.Column(0).Text()) != key || rec.Column(1).Int() != int64(i):
			t.Errorf("GetKey(%s) returned the row %q, %v", key, rec.Column(0).Text(), rec.Column(1))
		}
	}
	if corrupt == 0 {
		t.Error("no lookup met the damaged row")
	}
	// A scan reads the damaged row's key as no default: it is damage.
	for _, rec := range w.All() {
		_ = rec.Column(0)
	}
	if err := tx.Err(); !errors.Is(err, ErrCorrupt) {
		t.Errorf("a scan past the damaged row: Tx.Err %v, want ErrCorrupt", err)
	}
}

// TestCorruptEntryNamesPage: a malformed WITHOUT ROWID row read by a scan
// reads NULL and leaves the transaction an error that names its page,
// found again by its bytes (it has no rowid to seek).
func TestCorruptEntryNamesPage(t *testing.T) {
	path := damagedKeyFile(t, "key00004", 0x7f) // a header longer than the record
	_, tx, w := readTable(t, path, nil, "w")
	for _, rec := range w.All() {
		_ = rec.Column(1)
	}
	var ce *format.CorruptError
	if err := tx.Err(); !errors.As(err, &ce) || ce.Page != 2 {
		t.Fatalf("Tx.Err = %v, want a corruption error naming page 2", err)
	}
}

// TestCorruptRowOutOfOrderNamesPage: a malformed row whose rowid is also
// out of order, which a seek by rowid misses, is found again by its bytes
// to name its page. The error said "table t row 100" and no page.
func TestCorruptRowOutOfOrderNamesPage(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.db")
	stmts := []string{"CREATE TABLE t(a INTEGER PRIMARY KEY, b TEXT)"}
	for i := 1; i <= 10; i++ {
		stmts = append(stmts, fmt.Sprintf("INSERT INTO t VALUES (%d, 'row%d')", i, i))
	}
	sqltest.Exec(t, path, stmts...)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// Row 5's cell: payload length 7, rowid 5, then its record (header
	// 3 bytes: the alias's NULL, a TEXT of 4), the text.
	i := bytes.Index(data, []byte{7, 5, 3, 0, 21, 'r', 'o', 'w', '5'})
	if i < 0 {
		t.Fatal("row 5's cell is not in the file")
	}
	data[i+1] = 127  // a rowid out of order, which a seek misses
	data[i+2] = 0x7f // a header longer than the record
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	_, tx, tb := readTable(t, path, nil, "t")
	c := tb.Cursor()
	for ok := c.First(); ok; ok = c.Next() {
		_ = c.Record().Column(1)
	}
	var ce *format.CorruptError
	if err := tx.Err(); !errors.As(err, &ce) || ce.Page != 2 {
		t.Fatalf("Tx.Err = %v, want a corruption error naming page 2", err)
	}
}
