package pagoda

import (
	"testing"

	"github.com/pagodadb/pagoda/internal/expr"
	"github.com/pagodadb/pagoda/internal/format"
	"github.com/pagodadb/pagoda/internal/pager"
)

// columnMeta describes six columns for the Column tests: column 0 the rowid
// alias, 1 to 4 stored fields 0 to 3 (REAL affinity where real says so),
// 5 a virtual generated column; field 3 has a default for old rows.
func columnMeta(real byte) *recordMeta {
	m := &recordMeta{
		owner: "table t",
		names: []string{"id", "a", "b", "c", "d", "v"},
		Layout: expr.Layout{
			Field:    []int{-1, 0, 1, 2, 3, -1},
			Alias:    0,
			Real:     make([]bool, 6),
			Defaults: []format.Value{{}, {}, {}, {}, format.IntValue(7), {}},
		},
	}
	for i := range m.Real {
		m.Real[i] = real&(1<<i) != 0
	}
	m.setFast()
	return m
}

// sameValue reports whether a and b are the same value, aliasing the same
// bytes.
func sameValue(a, b Value) bool {
	if a.Type() != b.Type() || len(a.b) != len(b.b) || cap(a.b) != cap(b.b) {
		return false
	}
	if len(a.b) > 0 && &a.b[0] != &b.b[0] {
		return false
	}
	return a.n == b.n
}

// FuzzColumn checks Column's fast path against its general path, column,
// on any bytes as a record: the same value (aliasing the same bytes) for
// every column, and never a panic.
func FuzzColumn(f *testing.F) {
	seeds := [][]byte{
		{4, 0, 0x81, 0x54}, // the bench's row: NULL (the rowid), a 100-byte BLOB, cut short
		{5, 1, 7, 13, 21, 9, 0x3f, 0xf0, 0, 0, 0, 0, 0, 0, 'a', 'b', 'c', 'd'},
		{3, 1, 1, 42, 43},  // two integers, in REAL columns when real says so
		{2, 10, 0},         // a reserved serial type
		{0x80, 0x03, 1, 1}, // a header length in two bytes
		{3, 0x80, 0x0c, 0}, // a two-byte serial type of 12
		{200, 1},           // a header longer than the record
		{},
	}
	for i, s := range seeds {
		f.Add(s, byte(i*37))
	}
	f.Fuzz(func(t *testing.T, data []byte, real byte) {
		m := columnMeta(real)
		r := Record{data: pager.AsString(data), rowid: -3, ctx: &recordCtx{meta: m}}
		for i := -1; i <= len(m.Field); i++ {
			got, want := r.Column(i), r.column(i)
			if !sameValue(got, want) {
				t.Fatalf("record % x, real %08b: Column(%d) = %v %x %d; column = %v %x %d",
					data, real, i, got.Type(), got.b, got.n, want.Type(), want.b, want.n)
			}
		}
	})
}

// TestColumnFastPath checks Column on records of every serial type the fast
// path reads, against the general path and against what was stored.
func TestColumnFastPath(t *testing.T) {
	big := make([]byte, 8000)
	for i := range big {
		big[i] = byte(i)
	}
	tests := []struct {
		name string
		vals []format.Value
		real byte
		want []Value
	}{
		{"ints", []format.Value{format.IntValue(0), format.IntValue(1), format.IntValue(-300), format.IntValue(1 << 40)}, 0,
			[]Value{intValue(0), intValue(1), intValue(-300), intValue(1 << 40)}},
		{"ints in REAL columns", []format.Value{format.IntValue(2), format.FloatValue(2.5), format.NullValue(), format.IntValue(-1)}, 0xff,
			[]Value{floatValue(2), floatValue(2.5), {}, floatValue(-1)}},
		{"text and blobs", []format.Value{format.TextValue([]byte("héllo")), format.BlobValue(nil), format.BlobValue(big), format.TextValue(nil)}, 0xff,
			[]Value{bytesValue(TypeText, []byte("héllo")), bytesValue(TypeBlob, []byte{}), bytesValue(TypeBlob, big), bytesValue(TypeText, []byte{})}},
		{"old row", []format.Value{format.IntValue(5), format.NullValue(), format.FloatValue(-0.5)}, 0,
			[]Value{intValue(5), {}, floatValue(-0.5), intValue(7)}},
	}
	for _, tt := range tests {
		data := format.AppendRecord(nil, tt.vals)
		m := columnMeta(tt.real << 1)
		r := Record{data: pager.AsString(data), rowid: 99, ctx: &recordCtx{meta: m}}
		if got := r.Column(0); got.Int() != 99 || got.Type() != TypeInteger {
			t.Errorf("%s: the rowid alias reads %v %d", tt.name, got.Type(), got.Int())
		}
		for k, want := range tt.want {
			got := r.Column(k + 1)
			if !sameValue(got, r.column(k+1)) || got.Type() != want.Type() || got.n != want.n || string(got.Blob()) != string(want.Blob()) {
				t.Errorf("%s: column %d = %v %x %d, want %v %x %d", tt.name, k+1, got.Type(), got.b, got.n, want.Type(), want.b, want.n)
			}
		}
		if got := r.Column(5); got.Type() != TypeNull {
			t.Errorf("%s: the virtual column reads %v", tt.name, got.Type())
		}
	}
}
