package bench

import (
	"errors"

	"github.com/pagodadb/pagoda"
)

// pagodaPeer reads the SQLite file through pagoda's public API: one long
// read transaction, the table looked up once, Table.Get and Table.All.
type pagodaPeer struct {
	db *pagoda.DB
	tx *pagoda.Tx
	t  *pagoda.Table
}

func (p *pagodaPeer) Name() string { return "pagoda" }

func (p *pagodaPeer) Open(f *Fixture) error {
	db, err := pagoda.Open(f.SQLitePath, &pagoda.Options{ReadOnly: true})
	if err != nil {
		return err
	}
	tx, err := db.Begin(false)
	if err != nil {
		db.Close()
		return err
	}
	t, err := tx.Table(tableName)
	if err != nil {
		tx.Rollback()
		db.Close()
		return err
	}
	p.db, p.tx, p.t = db, tx, t
	return nil
}

func (p *pagodaPeer) Get(rowid int64) ([]byte, error) {
	rec, err := p.t.Get(rowid)
	if err != nil {
		return nil, err
	}
	return rec.Column(1).Blob(), nil
}

func (p *pagodaPeer) Scan(fn func(v []byte)) (int, error) {
	n := 0
	for _, rec := range p.t.All() {
		fn(rec.Column(1).Blob())
		n++
	}
	return n, p.tx.Err()
}

func (p *pagodaPeer) Close() error {
	if p.db == nil {
		return nil
	}
	err := p.tx.Rollback()
	err = errors.Join(err, p.db.Close())
	p.db, p.tx, p.t = nil, nil, nil
	return err
}
