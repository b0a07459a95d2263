package fsys_test

import (
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/pagodadb/pagoda/fsys"
)

// benchText returns n bytes of text-like data (words of a small
// vocabulary, lines of about 60 bytes) that deflate shrinks about 3 times.
func benchText(n int) []byte {
	words := strings.Fields("the of and a to in is you that it he was for on are as with his they I at be this have from or one had by word but not what all were we when your can said there use an each which she do how their if will up other about out many then them these so some her would make like him into time has look two more write go see number no way could people my than first water been call who oil its now find long down day did get come made may part")
	r := rand.New(rand.NewPCG(1, 2))
	var sb strings.Builder
	line := 0
	for sb.Len() < n {
		w := words[r.IntN(len(words))]
		sb.WriteString(w)
		if line += len(w) + 1; line > 60 {
			sb.WriteByte('\n')
			line = 0
		} else {
			sb.WriteByte(' ')
		}
	}
	return []byte(sb.String()[:n])
}

// benchFiles are the files the read benchmarks read: stored as they are,
// and zlib-compressed (what sqlite3 -A and Options.Compress store).
var benchFiles = []struct {
	name     string
	size     int
	compress bool
}{
	{"raw-4KiB", 4 << 10, false},
	{"zlib-4KiB", 4 << 10, true},
	{"zlib-64KiB", 64 << 10, true},
	{"zlib-1MiB", 1 << 20, true},
}

// benchArchive returns an FS holding benchFiles.
func benchArchive(b *testing.B) *fsys.FS {
	db := openDB(b, nil)
	raw, z := fsys.New(db, nil), fsys.New(db, &fsys.Options{Compress: true})
	for _, bf := range benchFiles {
		f := raw
		if bf.compress {
			f = z
		}
		if err := f.WriteFile(bf.name, benchText(bf.size), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	return raw
}

// BenchmarkReadFile: FS.ReadFile of one file, the path fs.ReadFile and
// the bench command's fs-read take.
func BenchmarkReadFile(b *testing.B) {
	f := benchArchive(b)
	for _, bf := range benchFiles {
		b.Run(bf.name, func(b *testing.B) {
			b.SetBytes(int64(bf.size))
			b.ReportAllocs()
			for b.Loop() {
				data, err := f.ReadFile(bf.name)
				if err != nil || len(data) != bf.size {
					b.Fatalf("ReadFile: %d bytes, %v", len(data), err)
				}
			}
		})
	}
}

// BenchmarkOpenRead: Open, a copy of the whole file (through its WriterTo,
// as io.Copy does, or through Read with a 32 KiB buffer, as http.ServeContent
// does) and Close.
func BenchmarkOpenRead(b *testing.B) {
	f := benchArchive(b)
	buf := make([]byte, 32<<10)
	for _, how := range []string{"WriteTo", "Read"} {
		for _, bf := range benchFiles {
			b.Run(fmt.Sprintf("%s/%s", how, bf.name), func(b *testing.B) {
				b.SetBytes(int64(bf.size))
				b.ReportAllocs()
				for b.Loop() {
					fl, err := f.Open(bf.name)
					if err != nil {
						b.Fatal(err)
					}
					var n int64
					if how == "WriteTo" {
						n, err = fl.(io.WriterTo).WriteTo(io.Discard)
					} else {
						n, err = io.CopyBuffer(io.Discard, struct{ io.Reader }{fl}, buf)
					}
					if err != nil || n != int64(bf.size) {
						b.Fatalf("copy: %d bytes, %v", n, err)
					}
					fl.Close()
				}
			})
		}
	}
}
