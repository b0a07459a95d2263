package schema

import (
	"fmt"
	"strings"
)

// keyString renders terms as "(c desc,a nocase)".
func keyString(cols []IndexedColumn) string {
	parts := make([]string, len(cols))
	for i, c := range cols {
		s := c.Name
		if c.Expr {
			s = "expr[" + c.Name + "]"
		}
		if c.Collation != CollBinary {
			s += " " + strings.ToLower(c.Collation.String())
		}
		if c.Desc {
			s += " desc"
		}
		parts[i] = s
	}
	return "(" + strings.Join(parts, ",") + ")"
}

// describeKeys summarises the key structure of a table on one line:
//
//	alias=id pk=(id) cons=1:U(b) rec=id,b
func describeKeys(t *Table) string {
	alias := "-"
	if t.RowidAlias >= 0 {
		alias = t.Columns[t.RowidAlias].Name
	}
	var cons []string
	for i, c := range t.Constraints {
		kind := "U"
		if c.PrimaryKey {
			kind = "PK"
		}
		cons = append(cons, fmt.Sprintf("%d:%s%s", i+1, kind, keyString(c.Columns)))
	}
	var rec []string
	for _, i := range t.RecordOrder {
		rec = append(rec, t.Columns[i].Name)
	}
	return fmt.Sprintf("alias=%s pk=%s cons=%s rec=%s", alias, keyString(t.PrimaryKey),
		strings.Join(cons, " "), strings.Join(rec, ","))
}

// describeColumn renders a column as "name|type|AFFINITY|flags".
func describeColumn(c Column) string {
	var flags []string
	if c.Collation != CollBinary {
		flags = append(flags, strings.ToLower(c.Collation.String()))
	}
	if c.NotNull {
		flags = append(flags, "nn")
	}
	if c.PrimaryKey {
		flags = append(flags, "pk")
	}
	if c.Generated {
		if c.Hidden {
			flags = append(flags, "virtual")
		} else {
			flags = append(flags, "stored")
		}
	}
	if c.HasDefault {
		flags = append(flags, "default="+c.Default)
	}
	return c.Name + "|" + c.Type + "|" + c.Affinity.String() + "|" + strings.Join(flags, ",")
}
