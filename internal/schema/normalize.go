package schema

import "fmt"

// NormalizeCreate returns the text sqlite3 stores in sqlite_schema.sql for a
// CREATE TABLE or CREATE [UNIQUE] INDEX statement (sqlite-format.md §6): the
// leading keywords become "CREATE TABLE ", "CREATE INDEX " or "CREATE UNIQUE
// INDEX "; TEMP, IF NOT EXISTS and a schema prefix on the name are dropped;
// the rest, from the object name on, is kept verbatim up to the end of the
// statement, without a trailing ";":
//
//	create table if not exists   Foo ( x int , y )  =>  CREATE TABLE Foo ( x int , y )
//
// Where the statement ends follows sqlite3 3.40 exactly: a table without
// options ends at its closing parenthesis; a table with WITHOUT ROWID or
// STRICT, and an index, end just before the ";" (or at the end of the
// input), so white space and comments before it are kept, as sqlite3 keeps
// them.
//
// The statement must parse (ParseCreateTable or ParseCreateIndex); its errors
// are returned. CREATE VIRTUAL TABLE, VIEW and TRIGGER give an error wrapping
// ErrUnsupported.
func NormalizeCreate(sql string) (string, error) {
	p, err := newParser(sql)
	if err != nil {
		return "", err
	}
	if err := p.expect("CREATE"); err != nil {
		return "", err
	}
	temp := p.accept("TEMP") || p.accept("TEMPORARY")
	var kind string
	switch t := p.peek(); {
	case t.is("TABLE"):
		kind = "TABLE"
	case t.is("INDEX") && !temp:
		kind = "INDEX"
	case t.is("UNIQUE") && p.peekAt(1).is("INDEX") && !temp:
		kind = "UNIQUE INDEX"
		p.next()
	case t.is("VIRTUAL") || t.is("VIEW") || t.is("TRIGGER"):
		return "", p.errAt(ErrUnsupported, t, "CREATE %s", t.text)
	default:
		return "", p.syntaxf("expected TABLE or INDEX")
	}
	p.next()
	if err := p.ifNotExists(); err != nil {
		return "", err
	}
	_, name, _, err := p.qualifiedName("object")
	if err != nil {
		return "", err
	}

	last := p.toks[len(p.toks)-2] // the last token before EOF
	end := len(sql)
	if last.isOp(";") {
		end = last.pos
	}
	if kind == "TABLE" {
		t, err := ParseCreateTable(sql)
		if err != nil {
			return "", err
		}
		if !t.WithoutRowID && !t.Strict {
			// The text ends with the ")" closing the column list.
			if last.isOp(";") {
				last = p.toks[len(p.toks)-3]
			}
			end = last.end
		}
	} else if _, err := ParseCreateIndex(sql); err != nil {
		return "", err
	}
	if end < name.pos {
		return "", fmt.Errorf("%w: malformed CREATE statement", ErrSyntax)
	}
	return "CREATE " + kind + " " + sql[name.pos:end], nil
}

// IfNotExists reports whether a CREATE TABLE or CREATE [UNIQUE] INDEX
// statement says IF NOT EXISTS (false for text that does not parse that
// far).
func IfNotExists(sql string) bool {
	p, err := newParser(sql)
	if err != nil || p.expect("CREATE") != nil {
		return false
	}
	_ = p.accept("TEMP") || p.accept("TEMPORARY")
	_ = p.accept("UNIQUE")
	if !p.accept("TABLE") && !p.accept("INDEX") {
		return false
	}
	return p.accept("IF") && p.accept("NOT") && p.accept("EXISTS")
}

// CreateSchema returns the schema a CREATE TABLE or CREATE INDEX statement
// creates its object in: "temp" after TEMP or TEMPORARY, else the name's
// qualifier as written ("main", "temp", "aux"...), "" for none.
func CreateSchema(sql string) (string, error) {
	p, err := newParser(sql)
	if err != nil {
		return "", err
	}
	if err := p.expect("CREATE"); err != nil {
		return "", err
	}
	if p.accept("TEMP") || p.accept("TEMPORARY") {
		return "temp", nil
	}
	p.accept("UNIQUE")
	if !p.accept("TABLE") && !p.accept("INDEX") {
		return "", p.syntaxf("expected TABLE or INDEX")
	}
	if err := p.ifNotExists(); err != nil {
		return "", err
	}
	_, _, schema, err := p.qualifiedName("object")
	return schema, err
}
