package pagoda_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/pagodadb/pagoda"
	"github.com/pagodadb/pagoda/internal/sqltest"
)

// TestOpenBlob reads values SQLite wrote, of every size around the page's
// local-payload limits and across long overflow chains, at several page
// sizes, in random pieces, and checks them against the bytes Get returns.
func TestOpenBlob(t *testing.T) {
	for _, pageSize := range []int{512, 4096, 65536} {
		t.Run(fmt.Sprint(pageSize), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "b.db")
			db := sqltest.Open(t, path)
			for _, s := range []string{
				fmt.Sprintf("PRAGMA page_size=%d", pageSize),
				"CREATE TABLE t(id INTEGER PRIMARY KEY, a TEXT, b BLOB, n INT)",
			} {
				if _, err := db.Exec(s); err != nil {
					t.Fatal(err)
				}
			}
			r := rand.New(rand.NewPCG(uint64(pageSize), 1))
			sizes := []int{0, 1, 100, pageSize - 40, pageSize - 35, pageSize - 30, pageSize, pageSize + 1, 3 * pageSize, 200000}
			want := map[int64][]byte{}
			for i, n := range sizes {
				b := make([]byte, n)
				for j := range b {
					b[j] = byte(r.Uint32())
				}
				want[int64(i+1)] = b
				if _, err := db.Exec("INSERT INTO t VALUES(?, ?, ?, ?)", i+1, fmt.Sprint("row", i), b, n); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := db.Exec("INSERT INTO t VALUES(100, NULL, NULL, 5)"); err != nil {
				t.Fatal(err)
			}
			if _, err := db.Exec("ALTER TABLE t ADD COLUMN c TEXT DEFAULT 'dflt'"); err != nil {
				t.Fatal(err)
			}
			db.Close()

			pdb, err := pagoda.Open(path, &pagoda.Options{ReadOnly: true})
			if err != nil {
				t.Fatal(err)
			}
			defer pdb.Close()
			err = pdb.View(func(tx *pagoda.Tx) error {
				tab, err := tx.Table("t")
				if err != nil {
					return err
				}
				for rowid, w := range want {
					b, err := tab.OpenBlob(rowid, 2)
					if err != nil {
						return err
					}
					if b.Len() != int64(len(w)) || b.Type() != pagoda.TypeBlob {
						t.Fatalf("row %d: Len %d type %v, want %d blob", rowid, b.Len(), b.Type(), len(w))
					}
					if whole := b.Bytes(); whole != nil && !bytes.Equal(whole, w) {
						t.Fatalf("row %d: Bytes differ", rowid)
					}
					// Random pieces, forward and backward.
					for range 50 {
						off := r.Int64N(int64(len(w)) + 10)
						buf := make([]byte, r.IntN(3*pageSize))
						n, err := b.ReadAt(buf, off)
						end := min(off+int64(len(buf)), int64(len(w)))
						if off >= int64(len(w)) {
							if n != 0 || (err != io.EOF) {
								t.Fatalf("row %d: ReadAt past the end: %d, %v", rowid, n, err)
							}
							continue
						}
						if int64(n) != end-off || !bytes.Equal(buf[:n], w[off:end]) {
							t.Fatalf("row %d: ReadAt(%d bytes at %d) read %d, wrong bytes", rowid, len(buf), off, n)
						}
						if n < len(buf) && err != io.EOF || n == len(buf) && err != nil {
							t.Fatalf("row %d: ReadAt error %v after %d of %d", rowid, err, n, len(buf))
						}
					}
					all, err := io.ReadAll(b)
					if err != nil || !bytes.Equal(all, w) {
						t.Fatalf("row %d: Read: %v", rowid, err)
					}
					b.Seek(0, io.SeekStart)
					var sink bytes.Buffer
					if n, err := b.WriteTo(&sink); err != nil || n != int64(len(w)) || !bytes.Equal(sink.Bytes(), w) {
						t.Fatalf("row %d: WriteTo %d, %v", rowid, n, err)
					}
					a, err := tab.OpenBlob(rowid, 1)
					if err != nil || a.Type() != pagoda.TypeText || string(a.Bytes()) != fmt.Sprint("row", rowid-1) {
						t.Fatalf("row %d: text column: %v", rowid, err)
					}
					c, err := tab.OpenBlob(rowid, 4) // added later: the default
					if err != nil || string(c.Bytes()) != "dflt" || c.Type() != pagoda.TypeText {
						t.Fatalf("row %d: defaulted column: %q %v", rowid, c.Bytes(), err)
					}
				}
				null, err := tab.OpenBlob(100, 2)
				if err != nil || null.Type() != pagoda.TypeNull || null.Len() != 0 {
					t.Fatalf("NULL: %v", err)
				}
				if _, err := null.Read(make([]byte, 1)); err != io.EOF {
					t.Fatalf("reading NULL: %v", err)
				}
				for _, c := range []struct {
					rowid int64
					col   int
					want  error
				}{
					{100, 3, pagoda.ErrUnsupported}, // an integer
					{1, 0, pagoda.ErrUnsupported},   // the rowid alias
					{1, 9, pagoda.ErrNotFound},      // no such column
					{555, 2, pagoda.ErrNotFound},    // no such row
				} {
					if _, err := tab.OpenBlob(c.rowid, c.col); !errors.Is(err, c.want) {
						t.Errorf("OpenBlob(%d, %d): %v, want %v", c.rowid, c.col, err, c.want)
					}
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestOpenBlobAllocs: reading a value in place allocates the Blob and
// nothing per read.
func TestOpenBlobAllocs(t *testing.T) {
	db, err := pagoda.Open(filepath.Join(t.TempDir(), "a.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	big := bytes.Repeat([]byte("x"), 100000)
	err = db.Update(func(tx *pagoda.Tx) error {
		tab, err := tx.CreateTable("CREATE TABLE t(v BLOB)")
		if err != nil {
			return err
		}
		_, err = tab.Insert(big)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	tx, _ := db.Begin(false)
	defer tx.Rollback()
	tab, _ := tx.Table("t")
	b, err := tab.OpenBlob(1, 0)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 8192)
	off := int64(0)
	allocs := testing.AllocsPerRun(100, func() {
		b.ReadAt(buf, off)
		off = (off + 8192) % int64(len(big))
	})
	if allocs != 0 {
		t.Errorf("ReadAt allocates %.1f times", allocs)
	}
}

// TestSeekText: SeekText lands where Seek lands, on a TEXT column and on a
// column whose affinity turns numeric text into numbers.
func TestSeekText(t *testing.T) {
	db, err := pagoda.Open(filepath.Join(t.TempDir(), "a.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	err = db.Update(func(tx *pagoda.Tx) error {
		tab, err := tx.CreateTable("CREATE TABLE t(s TEXT, n INTEGER)")
		if err != nil {
			return err
		}
		for _, sql := range []string{"CREATE INDEX ts ON t(s)", "CREATE INDEX tn ON t(n)"} {
			if _, err := tx.CreateIndex(sql); err != nil {
				return err
			}
		}
		for i := range 2000 {
			if _, err := tab.Insert(fmt.Sprintf("k%05d", i*3), i*3); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	err = db.View(func(tx *pagoda.Tx) error {
		r := rand.New(rand.NewPCG(4, 4))
		for _, name := range []string{"ts", "tn"} {
			ix, err := tx.Index(name)
			if err != nil {
				return err
			}
			a, b := ix.Cursor(), ix.Cursor()
			for range 2000 {
				key := fmt.Sprintf("k%05d", r.IntN(6100))
				if name == "tn" {
					key = fmt.Sprint(r.IntN(6100))
				}
				okA, okB := a.SeekText([]byte(key)), b.Seek(key)
				if okA != okB || okA && a.Rowid() != b.Rowid() {
					t.Fatalf("%s: SeekText(%s) = %v row %d, Seek = %v row %d", name, key, okA, a.Rowid(), okB, b.Rowid())
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
