package crash

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/pagodadb/pagoda"
)

// The workload. Transaction k is a pure function of the seed, k and the
// state after transaction k-1: model.step generates it and applies it to
// the model at once. The writer applies the same ops to the database; the
// parent only replays the model to know what the file must hold.

const (
	maxRow  = 800 // rowids of table t are chosen in 1..maxRow
	kvKeys  = 500 // short bucket keys key-0000..key-0499
	kvLong  = 30  // long bucket keys (overflow pages in the bucket's index b-tree)
	nameSet = 40  // short names, so the name index has duplicates

	schemaT    = `CREATE TABLE t(id INTEGER PRIMARY KEY, name TEXT, n INT, data BLOB)`
	schemaTIx1 = `CREATE INDEX t_name ON t(name)`
	schemaTIx2 = `CREATE UNIQUE INDEX t_n ON t(n)`
	schemaMeta = `CREATE TABLE meta(id INTEGER PRIMARY KEY, k INTEGER)`
	schemaS    = `CREATE TABLE s(a INTEGER PRIMARY KEY, b TEXT)`
	schemaSIx  = `CREATE INDEX s_b ON s(b)`
	bucketName = "kv"
)

// row is a row of table t. Blobs are kept as a length and a seed, and
// made again when compared.
type row struct {
	name     string
	nameNull bool
	n        int64
	nNull    bool
	blobLen  int // -1: NULL
	blobSeed uint64
}

// val is a bucket value.
type val struct {
	n    int
	seed uint64
}

type opKind uint8

const (
	opCreate      opKind = iota // the schema (transaction 1)
	opInsert                    // t.Insert(id, ...)
	opInsertAuto                // t.Insert(nil, ...): id is the rowid SQLite chooses
	opPut                       // t.Put(id, ...) over an existing row
	opDelete                    // t.Delete(id)
	opKVPut                     // bucket put
	opKVDel                     // bucket delete of an existing key
	opScratchNew                // create table s, its index, and n rows
	opScratchDrop               // drop table s
	opMeta                      // meta row 1 := k (always last)
)

type op struct {
	kind opKind
	id   int64
	r    row
	key  string
	v    val
	n    int // opScratchNew: rows
}

// model is the state the database must hold after k transactions.
type model struct {
	seed    uint64
	k       int64
	rows    map[int64]row
	kv      map[string]val
	scratch int64 // k of the transaction that created table s; 0: no table s
	sRows   int
	ops     []op // step's result, reused
}

func newModel(seed uint64) *model {
	return &model{seed: seed, rows: map[int64]row{}, kv: map[string]val{}}
}

// advance replays transactions until the model is after transaction k.
func (m *model) advance(k int64) {
	for m.k < k {
		m.step()
	}
}

// step generates transaction m.k+1, applies it to the model and returns
// its ops, valid until the next step.
func (m *model) step() []op {
	m.k++
	k := m.k
	r := rand.New(rand.NewPCG(m.seed, uint64(k)))
	ops := m.ops[:0]
	if k == 1 {
		ops = append(ops, op{kind: opCreate})
	}
	// Transaction size: mostly small, some medium, a few large enough to
	// spill a 64 KiB cache many times over.
	var nOps int
	big := false
	switch p := r.IntN(100); {
	case p < 70:
		nOps = 1 + r.IntN(6)
	case p < 94:
		nOps = 10 + r.IntN(40)
	default:
		nOps = 100 + r.IntN(250)
		big = true
	}
	// Now and then a range of rows goes at once (whole pages freed).
	if r.IntN(100) < 3 {
		a := 1 + r.Int64N(maxRow)
		b := a + 50 + r.Int64N(200)
		for id := a; id < b; id++ {
			if _, ok := m.rows[id]; ok {
				delete(m.rows, id)
				ops = append(ops, op{kind: opDelete, id: id})
			}
		}
	}
	if r.IntN(100) < 3 {
		if m.scratch != 0 {
			m.scratch, m.sRows = 0, 0
			ops = append(ops, op{kind: opScratchDrop})
		} else {
			m.scratch, m.sRows = k, 10+r.IntN(300)
			ops = append(ops, op{kind: opScratchNew, n: m.sRows})
		}
	}
	for i := range nOps {
		if r.IntN(100) < 65 {
			id := 1 + r.Int64N(maxRow)
			if _, ok := m.rows[id]; ok {
				if r.IntN(100) < 30 {
					delete(m.rows, id)
					ops = append(ops, op{kind: opDelete, id: id})
				} else {
					rw := m.newRow(r, k, i, big)
					m.rows[id] = rw
					ops = append(ops, op{kind: opPut, id: id, r: rw})
				}
				continue
			}
			rw := m.newRow(r, k, i, big)
			if r.IntN(100) < 15 {
				if last := m.maxRowid(); last < maxRow {
					id = last + 1
					m.rows[id] = rw
					ops = append(ops, op{kind: opInsertAuto, id: id, r: rw})
					continue
				}
			}
			m.rows[id] = rw
			ops = append(ops, op{kind: opInsert, id: id, r: rw})
			continue
		}
		var key string
		if r.IntN(100) < 10 {
			key = longKey(r.IntN(kvLong))
		} else {
			key = shortKeys[r.IntN(kvKeys)]
		}
		if _, ok := m.kv[key]; ok && r.IntN(100) < 25 {
			delete(m.kv, key)
			ops = append(ops, op{kind: opKVDel, key: key})
			continue
		}
		v := val{seed: r.Uint64()}
		switch p := r.IntN(100); {
		case p < 5:
			v.n = 0
		case p < 70:
			v.n = 1 + r.IntN(200)
		case p < 90:
			v.n = 200 + r.IntN(3000)
		default:
			v.n = 3000 + r.IntN(9000)
		}
		m.kv[key] = v
		ops = append(ops, op{kind: opKVPut, key: key, v: v})
	}
	ops = append(ops, op{kind: opMeta})
	m.ops = ops
	return ops
}

// maxRowid returns the largest rowid of table t, 0 when it is empty. Every
// rowid is at most maxRow.
func (m *model) maxRowid() int64 {
	for id := int64(maxRow); id > 0; id-- {
		if _, ok := m.rows[id]; ok {
			return id
		}
	}
	return 0
}

// newRow makes the i-th row of transaction k. n is unique across the whole
// history (the UNIQUE index never conflicts) or NULL.
func (m *model) newRow(r *rand.Rand, k int64, i int, big bool) row {
	var rw row
	switch p := r.IntN(100); {
	case p < 3:
		rw.nameNull = true
	case p < 5:
		rw.name = ""
	case p < 95:
		rw.name = names[r.IntN(nameSet)]
	default:
		// Long enough for the index entry to spill onto overflow pages.
		rw.name = fmt.Sprintf("long-%d-%d-", k, i) + strings.Repeat(string(rune('a'+r.IntN(26))), 200+r.IntN(2500))
	}
	if r.IntN(100) < 10 {
		rw.nNull = true
	} else {
		rw.n = k*1000 + int64(i)
	}
	rw.blobSeed = r.Uint64()
	p := r.IntN(100)
	if big {
		p = 60 + r.IntN(40)
	}
	switch {
	case p < 5:
		rw.blobLen = -1
	case p < 10:
		rw.blobLen = 0
	case p < 70:
		rw.blobLen = 1 + r.IntN(300)
	case p < 92:
		rw.blobLen = 300 + r.IntN(3700)
	default:
		rw.blobLen = 4000 + r.IntN(26000)
	}
	return rw
}

// The short names and bucket keys, made once: the writer replays the whole
// history at every start.
var names, shortKeys = func() (n, k []string) {
	for i := range nameSet {
		n = append(n, fmt.Sprintf("name-%02d", i))
	}
	for i := range kvKeys {
		k = append(k, fmt.Sprintf("key-%04d", i))
	}
	return n, k
}()

// longKey is the long bucket key number i: always the same bytes.
func longKey(i int) string {
	return fmt.Sprintf("long-key-%03d-", i) + strings.Repeat(string(rune('A'+i%26)), 100+i*37)
}

// fill returns n pseudo-random bytes made from seed.
func fill(seed uint64, n int) []byte {
	b := make([]byte, n+8)
	x := seed | 1
	for i := 0; i < n; i += 8 {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		b[i], b[i+1], b[i+2], b[i+3] = byte(x), byte(x>>8), byte(x>>16), byte(x>>24)
		b[i+4], b[i+5], b[i+6], b[i+7] = byte(x>>32), byte(x>>40), byte(x>>48), byte(x>>56)
	}
	return b[:n:n]
}

func (rw row) values(id any) []any {
	vals := []any{id, nil, nil, nil}
	if !rw.nameNull {
		vals[1] = rw.name
	}
	if !rw.nNull {
		vals[2] = rw.n
	}
	if rw.blobLen >= 0 {
		vals[3] = fill(rw.blobSeed, rw.blobLen) // never nil: an empty blob stays a blob
	}
	return vals
}

// scratchText is column b of row i of table s made by transaction sk.
func scratchText(sk int64, i int) string {
	return fmt.Sprintf("s-%d-%d-", sk, i) + strings.Repeat("x", (i*37)%400)
}

// apply runs the ops of transaction k in tx.
func apply(tx *pagoda.Tx, k int64, ops []op) error {
	if len(ops) > 0 && ops[0].kind == opCreate {
		for _, s := range []string{schemaT, schemaMeta} {
			if _, err := tx.CreateTable(s); err != nil {
				return fmt.Errorf("%s: %w", s, err)
			}
		}
		for _, s := range []string{schemaTIx1, schemaTIx2} {
			if _, err := tx.CreateIndex(s); err != nil {
				return fmt.Errorf("%s: %w", s, err)
			}
		}
		if _, err := tx.CreateBucket(bucketName); err != nil {
			return err
		}
		ops = ops[1:]
	}
	t, err := tx.Table("t")
	if err != nil {
		return err
	}
	b, err := tx.Bucket(bucketName)
	if err != nil {
		return err
	}
	for _, o := range ops {
		switch o.kind {
		case opInsert:
			if _, err := t.Insert(o.r.values(o.id)...); err != nil {
				return fmt.Errorf("insert %d: %w", o.id, err)
			}
		case opInsertAuto:
			id, err := t.Insert(o.r.values(nil)...)
			if err != nil {
				return fmt.Errorf("insert (auto rowid %d): %w", o.id, err)
			}
			if id != o.id {
				return fmt.Errorf("insert chose rowid %d, the model %d", id, o.id)
			}
		case opPut:
			if err := t.Put(o.id, o.r.values(o.id)...); err != nil {
				return fmt.Errorf("put %d: %w", o.id, err)
			}
		case opDelete:
			if err := t.Delete(o.id); err != nil {
				return fmt.Errorf("delete %d: %w", o.id, err)
			}
		case opKVPut:
			if err := b.Put([]byte(o.key), fill(o.v.seed, o.v.n)); err != nil {
				return fmt.Errorf("bucket put %q: %w", o.key, err)
			}
		case opKVDel:
			if err := b.Delete([]byte(o.key)); err != nil {
				return fmt.Errorf("bucket delete %q: %w", o.key, err)
			}
		case opScratchNew:
			s, err := tx.CreateTable(schemaS)
			if err != nil {
				return err
			}
			for i := 1; i <= o.n; i++ {
				if _, err := s.Insert(nil, scratchText(k, i)); err != nil {
					return fmt.Errorf("table s: %w", err)
				}
			}
			// The index after the rows: CreateIndex fills it.
			if _, err := tx.CreateIndex(schemaSIx); err != nil {
				return err
			}
		case opScratchDrop:
			if err := tx.DropTable("s"); err != nil {
				return err
			}
		case opMeta:
			meta, err := tx.Table("meta")
			if err != nil {
				return err
			}
			if err := meta.Put(1, int64(1), k); err != nil {
				return fmt.Errorf("meta: %w", err)
			}
		default:
			return fmt.Errorf("op %d out of place", o.kind)
		}
	}
	return nil
}

// metaK returns the k stored in the meta row: 0 before transaction 1.
func metaK(tx *pagoda.Tx) (int64, error) {
	meta, err := tx.Table("meta")
	if errors.Is(err, pagoda.ErrNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	rec, err := meta.Get(1)
	if err != nil {
		return 0, fmt.Errorf("meta row: %w", err)
	}
	v := rec.Column(1)
	if v.Type() != pagoda.TypeInteger {
		return 0, fmt.Errorf("meta row holds a %s", v.Type())
	}
	return v.Int(), nil
}

// compare reports how the database seen by tx differs from the model (at
// most a few differences per part).
func (m *model) compare(tx *pagoda.Tx) error {
	var errs []error
	add := func(format string, args ...any) bool {
		errs = append(errs, fmt.Errorf(format, args...))
		return len(errs) < 20
	}
	if m.k == 0 {
		if names := tx.TableNames(); len(names) != 0 {
			add("no transaction committed, but the schema has tables %v", names)
		}
		return errors.Join(errs...)
	}
	// Table t, in rowid order.
	t, err := tx.Table("t")
	if err != nil {
		return fmt.Errorf("table t: %w", err)
	}
	seen := 0
	for id, rec := range t.All() {
		want, ok := m.rows[id]
		if !ok {
			if !add("table t: row %d is in the database, not in the model", id) {
				break
			}
			continue
		}
		seen++
		if diff := want.diff(id, rec); diff != "" {
			if !add("table t: row %d: %s", id, diff) {
				break
			}
		}
	}
	if err := tx.Err(); err != nil {
		return fmt.Errorf("table t: scan: %w", err)
	}
	if seen != len(m.rows) {
		var missing []int64
		for id := range m.rows {
			if _, err := t.Get(id); errors.Is(err, pagoda.ErrNotFound) {
				missing = append(missing, id)
			}
		}
		slices.Sort(missing)
		if len(missing) > 10 {
			missing = missing[:10]
		}
		add("table t: %d rows of the model found, %d expected; missing rowids %v...", seen, len(m.rows), missing)
	}
	// The bucket, in key order.
	b, err := tx.Bucket(bucketName)
	if err != nil {
		return fmt.Errorf("bucket: %w", err)
	}
	seen = 0
	for key, value := range b.All() {
		want, ok := m.kv[string(key)]
		if !ok {
			if !add("bucket: key %.40q is in the database, not in the model", key) {
				break
			}
			continue
		}
		seen++
		if !bytes.Equal(value, fill(want.seed, want.n)) {
			if !add("bucket: key %.40q: value of %d bytes differs from the model's %d bytes", key, len(value), want.n) {
				break
			}
		}
	}
	if err := tx.Err(); err != nil {
		return fmt.Errorf("bucket: scan: %w", err)
	}
	if seen != len(m.kv) {
		add("bucket: %d keys of the model found, %d expected", seen, len(m.kv))
	}
	// Table s.
	s, err := tx.Table("s")
	switch {
	case m.scratch == 0 && err == nil:
		add("table s exists, the model dropped it")
	case m.scratch == 0 && errors.Is(err, pagoda.ErrNotFound):
	case err != nil:
		add("table s (made by transaction %d): %v", m.scratch, err)
	default:
		i := 0
		for id, rec := range s.All() {
			i++
			if id != int64(i) || rec.Column(1).Text() != scratchText(m.scratch, i) {
				add("table s: row %d (the %dth) differs from the model", id, i)
				break
			}
		}
		if err := tx.Err(); err != nil {
			add("table s: scan: %v", err)
		} else if i != m.sRows {
			add("table s: %d rows, the model has %d", i, m.sRows)
		}
	}
	return errors.Join(errs...)
}

func (want row) diff(id int64, rec pagoda.Record) string {
	if got := rec.Column(0); got.Type() != pagoda.TypeInteger || got.Int() != id {
		return fmt.Sprintf("id column %v", got.Any())
	}
	name := rec.Column(1)
	switch {
	case want.nameNull && name.Type() != pagoda.TypeNull:
		return fmt.Sprintf("name is a %s, the model's is NULL", name.Type())
	case !want.nameNull && (name.Type() != pagoda.TypeText || name.Text() != want.name):
		return fmt.Sprintf("name %s %.40q, the model's %.40q", name.Type(), name.Text(), want.name)
	}
	n := rec.Column(2)
	switch {
	case want.nNull && n.Type() != pagoda.TypeNull:
		return fmt.Sprintf("n is %v, the model's is NULL", n.Any())
	case !want.nNull && (n.Type() != pagoda.TypeInteger || n.Int() != want.n):
		return fmt.Sprintf("n is %v, the model's %d", n.Any(), want.n)
	}
	data := rec.Column(3)
	switch {
	case want.blobLen < 0 && data.Type() != pagoda.TypeNull:
		return fmt.Sprintf("data is a %s, the model's is NULL", data.Type())
	case want.blobLen >= 0 && data.Type() != pagoda.TypeBlob:
		return fmt.Sprintf("data is a %s, the model's a blob", data.Type())
	case want.blobLen >= 0 && !bytes.Equal(data.Blob(), fill(want.blobSeed, want.blobLen)):
		return fmt.Sprintf("data: %d bytes differ from the model's %d bytes", len(data.Blob()), want.blobLen)
	}
	return ""
}

// sums are what the SQLite checks compare: row counts and byte totals.
type sums struct {
	rows, dataBytes, kvKeys, kvBytes int64
}

func (m *model) sums() sums {
	s := sums{rows: int64(len(m.rows)), kvKeys: int64(len(m.kv))}
	for _, rw := range m.rows {
		s.dataBytes += int64(max(rw.blobLen, 0))
	}
	for _, v := range m.kv {
		s.kvBytes += int64(v.n)
	}
	return s
}
