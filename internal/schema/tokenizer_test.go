package schema

import (
	"errors"
	"strings"
	"testing"
)

var kindNames = map[tokenKind]string{
	tokWord: "word", tokQuoted: "quoted", tokString: "string", tokBlob: "blob",
	tokNumber: "number", tokVariable: "var", tokOp: "op",
}

// renderTokens renders tokens as "kind:text" separated by spaces, without EOF.
func renderTokens(toks []token) string {
	var parts []string
	for _, t := range toks {
		if t.kind != tokEOF {
			parts = append(parts, kindNames[t.kind]+":"+t.text)
		}
	}
	return strings.Join(parts, " ")
}

func TestTokenize(t *testing.T) {
	tests := []struct{ in, want string }{
		{"CREATE TABLE t(a)", "word:CREATE word:TABLE word:t op:( word:a op:)"},
		{`"a ""b""" [c d] ` + "`e``f`" + ` 'g''h'`, `quoted:"a ""b""" quoted:[c d] quoted:` + "`e``f`" + ` string:'g''h'`},
		{"x'00ff' X'' xy x", "blob:x'00ff' blob:X'' word:xy word:x"},
		{"1 1.5 .5 1e3 1E+3 2.e-4 0x1F 0X0 1.", "number:1 number:1.5 number:.5 number:1e3 number:1E+3 number:2.e-4 number:0x1F number:0X0 number:1."},
		// Digit separators (SQLite 3.46) between two digits: the text drops them.
		{"1_000 0x1_F 1_0.5e1_0 .5_5 1e-1_0", "number:1000 number:0x1F number:10.5e10 number:.55 number:1e-10"},
		{"a--comment\nb/* c */c/* unterminated", "word:a word:b word:c"},
		{"a->>b->c||d<=e>=f<>g<<h>>i==j!=k", "word:a op:->> word:b op:-> word:c op:|| word:d op:<= word:e op:>= word:f op:<> word:g op:<< word:h op:>> word:i op:== word:j op:!= word:k"},
		{"(),;.+-*/%=< >&|~", "op:( op:) op:, op:; op:. op:+ op:- op:* op:/ op:% op:= op:< op:> op:& op:| op:~"},
		{"? ?12 :a @b $c #d", "var:? var:?12 var::a var:@b var:$c var:#d"},
		{"_x1 a$b \u00e9t\u00e9 \u212Aey", "word:_x1 word:a$b word:\u00e9t\u00e9 word:\u212Aey"},
		{" \t\n\f\r", ""},
	}
	for _, tt := range tests {
		toks, err := tokenize(tt.in)
		if err != nil {
			t.Errorf("tokenize(%q): %v", tt.in, err)
			continue
		}
		if got := renderTokens(toks); got != tt.want {
			t.Errorf("tokenize(%q)\n got %s\nwant %s", tt.in, got, tt.want)
		}
		last := toks[len(toks)-1]
		if last.kind != tokEOF || last.pos != len(tt.in) {
			t.Errorf("tokenize(%q) does not end with EOF", tt.in)
		}
		for _, tk := range toks {
			src := tt.in[tk.pos:tk.end]
			if tk.kind == tokNumber {
				src = strings.ReplaceAll(src, "_", "")
			}
			if tk.text != src {
				t.Errorf("tokenize(%q): token %q is not its source slice", tt.in, tk.text)
			}
		}
	}
}

func TestTokenizeErrors(t *testing.T) {
	for _, in := range []string{"'abc", `"abc`, "`abc", "[abc", "x'0'", "x'0g'", "x'00", "12abc", "1.5e", "!", "^", "a\x00b", "\v", "{", "$", ":", "0x",
		"1__0", "1_", "1_.5", "1._5", "0x1_", "0x1__2", "1e_5", "1e1_", "1_e5"} {
		// "1.5e" and "0x" are numbers directly followed by identifier
		// characters, which sqlite3 rejects.
		toks, err := tokenize(in)
		if !errors.Is(err, ErrSyntax) {
			t.Errorf("tokenize(%q) = %s, %v; want a syntax error", in, renderTokens(toks), err)
		}
	}
}

func TestDequote(t *testing.T) {
	tests := []struct{ in, want string }{
		{`"a""b"`, `a"b`}, {"[a b]", "a b"}, {"`a``b`", "a`b"}, {"'it''s'", "it's"}, {"abc", "abc"},
		{`"a" b`, "a"}, {"[a] [b]", "a"}, {"", ""},
	}
	for _, tt := range tests {
		if got := dequoteText(tt.in); got != tt.want {
			t.Errorf("dequoteText(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	for in, want := range map[string]string{"[a]b": "a]", "[a] [b]": "[a] [b]", `"INTEGER"`: "INTEGER", `""`: "", "ab": "ab"} {
		if got := dequoteToken(in); got != want {
			t.Errorf("dequoteToken(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestDropDigitSeparators(t *testing.T) {
	for in, want := range map[string]string{
		"-1_000":                      "-1000",
		"(0x1_0 + 'a_b' + a_1 /*_*/)": "(0x10 + 'a_b' + a_1 /*_*/)",
		"x_'00'":                      "x_'00'",
		"1.5":                         "1.5",
		"'unterminated_":              "'unterminated_", // not SQL: as written
	} {
		if got := dropDigitSeparators(in); got != want {
			t.Errorf("dropDigitSeparators(%q) = %q, want %q", in, got, want)
		}
	}
}
