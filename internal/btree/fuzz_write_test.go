package btree

import (
	"fmt"
	"testing"

	"github.com/pagodadb/pagoda/internal/format"
)

// The fuzz targets drive random operation sequences, decoded from the fuzz
// input three bytes at a time, against a model, on 512-byte pages so that a
// few operations split, merge and overflow. After the sequence the tree
// must pass the validator and scan equal to the model.
//
//	byte 0: operation (low 2 bits) and payload size class (the rest)
//	byte 1: key
//	byte 2: payload size within the class

// fuzzSize turns a size class and a byte into a payload size: empty, tiny
// (the 4-byte cell minimum), small, around the local maximum, over a page.
func fuzzSize(class, b byte) int {
	switch class % 5 {
	case 0:
		return 0
	case 1:
		return int(b % 4)
	case 2:
		return int(b)
	case 3:
		return 380 + int(b)
	}
	return 500 + int(b)*8
}

func FuzzTableOps(f *testing.F) {
	f.Add([]byte{0, 1, 10, 0, 2, 10, 1, 1, 0})
	f.Add([]byte("\x08\x05\xff\x0c\x06\xff\x10\x07\xff\x01\x05\x00\x01\x06\x00"))
	seed := make([]byte, 0, 300)
	for i := 0; i < 100; i++ {
		seed = append(seed, byte(i%3)|byte(i%5)<<2, byte(i*7), byte(i*13))
	}
	f.Add(seed)
	f.Fuzz(func(t *testing.T, ops []byte) {
		if len(ops) > 3*2000 {
			return
		}
		m := newMemPager(512, true)
		wr := NewWriter(m)
		root, err := wr.CreateTree(true)
		if err != nil {
			t.Fatal(err)
		}
		model := tableModel{}
		for i := 0; i+2 < len(ops); i += 3 {
			op, key, sz := ops[i]&3, int64(ops[i+1]), fuzzSize(ops[i]>>2, ops[i+2])
			switch op {
			case 0, 2:
				p := payloadFor(key, i, sz)
				replaced, err := wr.TableInsert(root, key, p)
				_, had := model[key]
				if err != nil || replaced != had {
					t.Fatalf("op %d insert %d: replaced %v (model %v), %v", i/3, key, replaced, had, err)
				}
				model[key] = p
			case 1:
				found, err := wr.TableDelete(root, key)
				_, had := model[key]
				if err != nil || found != had {
					t.Fatalf("op %d delete %d: found %v (model %v), %v", i/3, key, found, had, err)
				}
				delete(model, key)
			case 3: // delete a run of keys
				for k := key; k < key+int64(sz%16); k++ {
					if _, err := wr.TableDelete(root, k); err != nil {
						t.Fatal(err)
					}
					delete(model, k)
				}
			}
		}
		checkTable(t, m, root, model)
	})
}

func FuzzIndexOps(f *testing.F) {
	f.Add([]byte{0, 1, 10, 0, 2, 10, 1, 1, 0})
	seed := make([]byte, 0, 300)
	for i := 0; i < 100; i++ {
		seed = append(seed, byte(i%3)|byte(i%5)<<2, byte(i*7), byte(i*13))
	}
	f.Add(seed)
	f.Fuzz(func(t *testing.T, ops []byte) {
		if len(ops) > 3*2000 {
			return
		}
		m := newMemPager(512, true)
		wr := NewWriter(m)
		root, err := wr.CreateTree(false)
		if err != nil {
			t.Fatal(err)
		}
		im := &indexModel{nKey: 1, entries: map[string][]byte{}}
		for i := 0; i+2 < len(ops); i += 3 {
			op, key, sz := ops[i]&3, ops[i+1], fuzzSize(ops[i]>>2, ops[i+2])
			// Keys of varied length, some overflowing the index cell.
			kv := format.TextValue(fmt.Appendf(nil, "%03d%0*d", key, int(ops[i+2]%4)*int(key%64), 0))
			switch op {
			case 0, 2:
				e := rec(kv, format.BlobValue(payloadFor(int64(key), i, sz)))
				id := im.identity(e)
				_, had := im.entries[id]
				replaced, err := wr.IndexInsert(root, nil, 1, e)
				if err != nil || replaced != had {
					t.Fatalf("op %d insert: replaced %v (model %v), %v", i/3, replaced, had, err)
				}
				im.entries[id] = e
			default:
				id := string(rec(kv))
				_, had := im.entries[id]
				found, err := wr.IndexDelete(root, nil, 1, []byte(id))
				if err != nil || found != had {
					t.Fatalf("op %d delete: found %v (model %v), %v", i/3, found, had, err)
				}
				delete(im.entries, id)
			}
		}
		checkIndex(t, m, root, im)
	})
}
