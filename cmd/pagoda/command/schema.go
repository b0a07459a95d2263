package command

import (
	"strings"

	"github.com/pagodadb/pagoda/cmd/pagoda/internal/cli"

	"github.com/pagodadb/pagoda"
)

func newSchemaCmd() *cli.Command {
	return &cli.Command{
		Use:   "schema FILE",
		Short: "Print the CREATE statements",
		Long: `Print the schema's CREATE statements in schema order, each followed by
';', as "sqlite3 FILE .schema" prints them: automatic indexes, which have no
SQL, are left out, and "CREATE TABLE 'x'" or "CREATE TABLE "x"" is printed
as "CREATE TABLE IF NOT EXISTS ...". (sqlite3 also appends a comment naming
a view's columns, which needs SQL compilation; pagoda does not.)`,
		Args: cli.ExactArgs(1),
		RunE: func(cmd *cli.Command, args []string) error {
			return runView(cmd, args[0], func(tx *pagoda.Tx, out *output) error {
				for _, o := range tx.Objects() {
					if o.SQL != "" {
						out.WriteString(schemaLine(o.SQL))
					}
				}
				return nil
			})
		},
	}
}

// schemaLine renders one statement as sqlite3's .schema does (shell.c,
// printSchemaLine): a statement that ends inside a comment gets the
// comment closed, a table whose name is quoted gets IF NOT EXISTS, and ";"
// and a newline follow.
func schemaLine(sql string) string {
	switch sqlTailState(sql) {
	case inLineComment:
		sql += "\n"
	case inBlockComment:
		sql += "*/"
	}
	if rest, ok := strings.CutPrefix(sql, "CREATE TABLE "); ok && rest != "" && (rest[0] == '"' || rest[0] == '\'') {
		sql = "CREATE TABLE IF NOT EXISTS " + rest
	}
	return sql + ";\n"
}

type lexState int

const (
	inCode lexState = iota
	inLineComment
	inBlockComment
	inQuote
)

// sqlTailState reports what a SQL text ends inside of: code, a comment or
// an unterminated quoted string or identifier.
func sqlTailState(s string) lexState {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '-' && i+1 < len(s) && s[i+1] == '-':
			j := strings.IndexByte(s[i:], '\n')
			if j < 0 {
				return inLineComment
			}
			i += j
		case c == '/' && i+1 < len(s) && s[i+1] == '*':
			j := strings.Index(s[i+2:], "*/")
			if j < 0 {
				return inBlockComment
			}
			i += 2 + j + 1
		case c == '\'' || c == '"' || c == '`' || c == '[':
			end := c
			if c == '[' {
				end = ']'
			}
			j := strings.IndexByte(s[i+1:], end)
			if j < 0 {
				return inQuote
			}
			i += 1 + j // a doubled quote is two strings in a row: same result
		}
	}
	return inCode
}
