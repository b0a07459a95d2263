package schema

import (
	"errors"
	"strings"
	"testing"
)

func TestParseExpr(t *testing.T) {
	for _, c := range []struct{ src, want string }{
		{"x >= 0", `("x" >= 0)`},
		{`"x" == 0`, `("x" = 0)`},
		{"x != 1 AND y <> 2", `(("x" <> 1) AND ("y" <> 2))`},
		{"a OR b AND c", `("a" OR ("b" AND "c"))`},
		{"NOT a = 1", `(NOT ("a" = 1))`},
		// NOT where an operand is due reaches as far as it does first.
		{"x + NOT y = 1 AND z", `(("x" + (NOT ("y" = 1))) AND "z")`},
		{"- NOT a", `(-(NOT "a"))`},
		{"a < b = c", `(("a" < "b") = "c")`},
		{"x IN (0, 1)", `("x" IN (0, 1))`},
		{"x NOT IN ()", `("x" NOT IN ())`},
		{"x BETWEEN -1 AND 1.5", `("x" BETWEEN (-1) AND 1.5)`},
		{"x NOT BETWEEN 'a' AND 'b'", `("x" NOT BETWEEN 'a' AND 'b')`},
		// An operator of equality's level that ends in a token of its own
		// is an operand of the tighter ones after it; BETWEEN's low bound
		// reaches to its AND.
		{"a IN (1, 2) + 1", `(("a" IN (1, 2)) + 1)`},
		{"a IN (1, 2) < 5 = b", `((("a" IN (1, 2)) < 5) = "b")`},
		{"a NOT IN (1) || 'x' COLLATE nocase", `(("a" NOT IN (1)) || ('x' COLLATE NOCASE))`},
		{"a NOT IN (1) COLLATE nocase", `(("a" NOT IN (1)) COLLATE NOCASE)`},
		{"a ISNULL + 1 * 2", `(("a" IS NULL) + (1 * 2))`},
		{"b = a NOTNULL - 1", `((("b" = "a") IS NOT NULL) - 1)`},
		{"a NOT NULL & 1 > 0", `((("a" IS NOT NULL) & 1) > 0)`},
		{"1 + a IN (1)", `((1 + "a") IN (1))`},
		{"a BETWEEN a <> 2 AND 5", `("a" BETWEEN ("a" <> 2) AND 5)`},
		{"a BETWEEN NOT b AND c + 1 = d", `(("a" BETWEEN (NOT "b") AND ("c" + 1)) = "d")`},
		{"a BETWEEN b IN (1) AND c < d", `("a" BETWEEN ("b" IN (1)) AND ("c" < "d"))`},
		{"x IS NULL", `("x" IS NULL)`},
		{"x IS NOT 'it''s'", `("x" IS NOT 'it''s')`},
		{"x ISNULL OR x NOTNULL OR x NOT NULL", `((("x" IS NULL) OR ("x" IS NOT NULL)) OR ("x" IS NOT NULL))`},
		{"length(x) <= 10", `(length("x") <= 10)`},
		{"TypeOf(x) = 'integer'", `(typeof("x") = 'integer')`},
		{"coalesce(a, b, 0) > 0", `(coalesce("a", "b", 0) > 0)`},
		{"x COLLATE nocase = 'a'", `(("x" COLLATE NOCASE) = 'a')`},
		{"-1 COLLATE rtrim", `((-1) COLLATE RTRIM)`},
		{"+x = x'00ff'", `((+"x") = x'00ff')`},
		{"[odd name] > 0x10", `("odd name" > 0x10)`},
		{"(((x)))", `"x"`},
		{"a + b * c || 'x' - -d", `(("a" + ("b" * ("c" || 'x'))) - (-"d"))`},
		{"a / 2 % 3 >= a - 1", `((("a" / 2) % 3) >= ("a" - 1))`},
		{"x NOT LIKE 'a%' ESCAPE '!' AND y LIKE z", `(("x" NOT LIKE 'a%' ESCAPE '!') AND ("y" LIKE "z"))`},
		{"x", `"x"`},
		{"x & 1 | y << 2 >> ~z", `(((("x" & 1) | "y") << 2) >> (~"z"))`},
		{"a + b & c", `(("a" + "b") & "c")`},
		{"x -> 'a' ->> '$.b' || 'c'", `((("x" -> 'a') ->> '$.b') || 'c')`},
		{"CASE WHEN x THEN 1 END", `CASE WHEN "x" THEN 1 END`},
		{"case x when 1 then 'a' when 2 then 'b' else 'c' end", `CASE "x" WHEN 1 THEN 'a' WHEN 2 THEN 'b' ELSE 'c' END`},
		{"CAST(x + 1 AS VARCHAR(10))", `CAST(("x" + 1) AS VARCHAR(10))`},
		{"abs(x) > 0", `(abs("x") > 0)`},
		{"substr(x, -2, 1) || char()", `(substr("x", (-2), 1) || char())`},
		{"iif(x, 1, y, 2, 3)", `iif("x", 1, "y", 2, 3)`},
		{"x GLOB 'a*' AND y NOT GLOB z || '?'", `(("x" GLOB 'a*') AND ("y" NOT GLOB ("z" || '?')))`},
		{"glob('a*', x) = true OR x IS NOT False", `((glob('a*', "x") = TRUE) OR ("x" IS NOT FALSE))`},
		{"printf('%d', x) || format('%s') || quote(x) || printf()", `(((printf('%d', "x") || format('%s')) || quote("x")) || printf())`},
		{"DATE(x, '+1 day') || time() || datetime(x, 'start of month', 'subsec')", `((date("x", '+1 day') || time()) || datetime("x", 'start of month', 'subsec'))`},
		{"julianday(x) + unixepoch(x, 'unixepoch') + strftime('%J', x) || timediff(x, '2000-01-01')", `((julianday("x") + unixepoch("x", 'unixepoch')) + (strftime('%J', "x") || timediff("x", '2000-01-01')))`},
	} {
		e, err := ParseExpr(c.src)
		if err != nil {
			t.Errorf("ParseExpr(%q): %v", c.src, err)
			continue
		}
		if got := e.String(); got != c.want {
			t.Errorf("ParseExpr(%q) = %s, want %s", c.src, got, c.want)
		}
	}
}

func TestParseExprCastAffinity(t *testing.T) {
	for src, want := range map[string]Affinity{
		"CAST(x AS INT)": AffinityInteger, "CAST(x AS text)": AffinityText, "CAST(x AS BLOB)": AffinityBlob,
		"CAST(x AS REAL)": AffinityReal, "CAST(x AS NUMERIC)": AffinityNumeric, "CAST(x AS VARCHAR(3))": AffinityText,
		"CAST(x AS FLOATING POINT)": AffinityInteger, "CAST(x AS DECIMAL(10, 2))": AffinityNumeric, "CAST(x AS whatever)": AffinityNumeric,
	} {
		e, err := ParseExpr(src)
		if err != nil {
			t.Errorf("ParseExpr(%q): %v", src, err)
			continue
		}
		if e.Op != OpCast || e.Aff != want {
			t.Errorf("ParseExpr(%q) = %s of affinity %v, want %v", src, e, e.Aff, want)
		}
	}
}

// TestGeneratedExprs: Column.Expr is the text inside a generated column's
// AS (...).
func TestGeneratedExprs(t *testing.T) {
	for _, c := range []struct {
		sql  string
		want []string
	}{
		{"CREATE TABLE t(a INT, b AS (a + 1), c TEXT GENERATED ALWAYS AS ( lower(x) ) STORED, d DEFAULT (CAST(1 AS TEXT)) CHECK (CAST(a AS INT) > 0))",
			[]string{"", "a + 1", "lower(x)", ""}},
		{"CREATE TABLE \"t\" (\"a\" CHECK((a) > 0), b INT AS ((a) * (2)) VIRTUAL, UNIQUE(a))", []string{"", "(a) * (2)"}},
	} {
		tb, err := ParseCreateTable(c.sql)
		if err != nil {
			t.Fatalf("%s: %v", c.sql, err)
		}
		var got []string
		for _, col := range tb.Columns {
			got = append(got, col.Expr)
		}
		if strings.Join(got, "|") != strings.Join(c.want, "|") {
			t.Errorf("%s: Column.Expr %q, want %q", c.sql, got, c.want)
		}
	}
}

func TestParseExprUnsupported(t *testing.T) {
	for _, src := range []string{
		"x GLOB 'a*' ESCAPE 'a'", "x MATCH 'a'", "x NOT REGEXP 'a'", "x ESCAPE 'a'", "CASE x END", "CASE WHEN x END", "CAST(x)", "CAST(x AS)",
		"x IN (SELECT 1)", "x IS DISTINCT FROM 1", "min(x)", "json_extract(x)", "json_type(x, 1, 2)", "round(x, 1, 2)", "quote(x, y)", "glob(x)",
		"json_valid(x, 1)", "json(x)", "count(*)", "t.x > 0", "x COLLATE mine", "(x, y) = (1, 2)",
		"TRUE(x)", "TRUE.x", "CURRENT_TIME", "EXISTS (SELECT 1)", "length(x, y)", "coalesce(x)", "x > 0 y",
		"timediff(x)", "timediff(x, y, z)", "CURRENT_DATE", "CURRENT_TIMESTAMP", "current_date()", "current_timestamp()", "now()",
		strings.Repeat("NOT ", 200) + "x", strings.Repeat("(", 200) + "x" + strings.Repeat(")", 200),
	} {
		if _, err := ParseExpr(src); !errors.Is(err, ErrUnsupported) && !errors.Is(err, ErrSyntax) {
			t.Errorf("ParseExpr(%q) = %v, want ErrUnsupported or ErrSyntax", src, err)
		}
	}
}

// FuzzParseExpr: any text is parsed or refused with an error, never a
// panic, and what is parsed prints as text that parses to the same.
func FuzzParseExpr(f *testing.F) {
	for _, s := range []string{"x >= 0", "a IN (1, 'b') AND NOT c BETWEEN -1 AND 2", "length(x) COLLATE nocase IS NOT NULL", "(((",
		// Deep trees, whose printed text nests twice as deep: a chain of
		// prefix operators, one of binary operators, NOTs.
		strings.Repeat("~", 63) + "0", strings.Repeat("~", 98) + "0", strings.Repeat("1 + ", 120) + "1", strings.Repeat("NOT ", 98) + "x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		e, err := ParseExpr(src)
		if err != nil {
			if !errors.Is(err, ErrUnsupported) && !errors.Is(err, ErrSyntax) {
				t.Fatalf("ParseExpr(%q): %v wraps neither ErrUnsupported nor ErrSyntax", src, err)
			}
			return
		}
		again, err := ParseExpr(e.String())
		if err != nil {
			t.Fatalf("ParseExpr(%q) = %s, which does not parse: %v", src, e, err)
		}
		if again.String() != e.String() {
			t.Fatalf("ParseExpr(%q) = %s, printed and parsed again %s", src, e, again)
		}
	})
}
