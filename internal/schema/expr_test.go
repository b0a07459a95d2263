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
		{"a < b = c", `(("a" < "b") = "c")`},
		{"x IN (0, 1)", `("x" IN (0, 1))`},
		{"x NOT IN ()", `("x" NOT IN ())`},
		{"x BETWEEN -1 AND 1.5", `("x" BETWEEN (-1) AND 1.5)`},
		{"x NOT BETWEEN 'a' AND 'b'", `("x" NOT BETWEEN 'a' AND 'b')`},
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

func TestParseExprUnsupported(t *testing.T) {
	for _, src := range []string{
		"x & 1", "x | 2", "x << 1", "x -> 'a'", "~x", "x GLOB 'a*'", "x NOT GLOB '*'", "x ESCAPE 'a'",
		"x IN (SELECT 1)", "x IS DISTINCT FROM 1", "CASE WHEN x THEN 1 END", "CAST(x AS INT)",
		"abs(x) > 0", "json_valid(x, 1)", "json(x)", "count(*)", "t.x > 0", "x COLLATE mine", "(x, y) = (1, 2)",
		"TRUE", "CURRENT_TIME", "EXISTS (SELECT 1)", "length(x, y)", "coalesce(x)", "x > 0 y",
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
	for _, s := range []string{"x >= 0", "a IN (1, 'b') AND NOT c BETWEEN -1 AND 2", "length(x) COLLATE nocase IS NOT NULL", "((("} {
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
