package cli

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Value is a flag's value: Set parses a command-line string into it,
// String prints it, and Type names it in the help ("string", "int"; "bool"
// flags take no value).
type Value interface {
	String() string
	Set(string) error
	Type() string
}

// Flag is one flag of a command.
type Flag struct {
	Name      string // long name: --name
	Shorthand string // one letter, or "": -n
	Usage     string // help text; a `word` in backquotes names the value
	Value     Value
	DefValue  string // Value.String() when the flag was defined
	// NoOptDefVal is the value of the flag given without one ("true" for
	// bool flags); "" means the flag needs a value.
	NoOptDefVal string
	Changed     bool // set on the command line
}

// FlagSet is a command's flags, in the order they were defined.
type FlagSet struct {
	flags []*Flag
}

// VarP defines a flag with a long name and a shorthand ("" for none).
// Defining a name twice panics: it is a programming error.
func (s *FlagSet) VarP(v Value, name, shorthand, usage string) *Flag {
	if name == "" || strings.HasPrefix(name, "-") || len(shorthand) > 1 {
		panic("cli: bad flag name " + strconv.Quote(name) + ", shorthand " + strconv.Quote(shorthand))
	}
	if s.Lookup(name) != nil || (shorthand != "" && s.ShorthandLookup(shorthand) != nil) {
		panic("cli: flag redefined: " + name)
	}
	f := &Flag{Name: name, Shorthand: shorthand, Usage: usage, Value: v, DefValue: v.String()}
	if v.Type() == "bool" {
		f.NoOptDefVal = "true"
	}
	s.flags = append(s.flags, f)
	return f
}

// Var defines a flag of a Value of the caller's.
func (s *FlagSet) Var(v Value, name, usage string) { s.VarP(v, name, "", usage) }

// BoolVar defines a bool flag stored in *p.
func (s *FlagSet) BoolVar(p *bool, name string, value bool, usage string) {
	s.BoolVarP(p, name, "", value, usage)
}

// BoolVarP is BoolVar with a shorthand.
func (s *FlagSet) BoolVarP(p *bool, name, shorthand string, value bool, usage string) {
	*p = value
	s.VarP((*boolValue)(p), name, shorthand, usage)
}

// BoolP defines a bool flag with a shorthand and returns where it is stored.
func (s *FlagSet) BoolP(name, shorthand string, value bool, usage string) *bool {
	p := new(bool)
	s.BoolVarP(p, name, shorthand, value, usage)
	return p
}

// StringVar defines a string flag stored in *p.
func (s *FlagSet) StringVar(p *string, name, value, usage string) {
	*p = value
	s.VarP((*stringValue)(p), name, "", usage)
}

// IntVar defines an int flag stored in *p.
func (s *FlagSet) IntVar(p *int, name string, value int, usage string) {
	*p = value
	s.VarP((*intValue)(p), name, "", usage)
}

// Int64Var defines an int64 flag stored in *p.
func (s *FlagSet) Int64Var(p *int64, name string, value int64, usage string) {
	*p = value
	s.VarP((*int64Value)(p), name, "", usage)
}

// Lookup returns the flag called name, or nil.
func (s *FlagSet) Lookup(name string) *Flag {
	if s == nil {
		return nil
	}
	for _, f := range s.flags {
		if f.Name == name {
			return f
		}
	}
	return nil
}

// ShorthandLookup returns the flag whose shorthand is short, or nil.
func (s *FlagSet) ShorthandLookup(short string) *Flag {
	if s == nil || short == "" {
		return nil
	}
	for _, f := range s.flags {
		if f.Shorthand == short {
			return f
		}
	}
	return nil
}

// Changed reports whether the flag called name was set on the command line.
func (s *FlagSet) Changed(name string) bool {
	f := s.Lookup(name)
	return f != nil && f.Changed
}

// usages formats flags for the help, one a line, sorted by name, the texts
// aligned: "  -l, --long     usage".
func usages(flags []*Flag) string {
	flags = slices.Clone(flags)
	slices.SortFunc(flags, func(a, b *Flag) int { return strings.Compare(a.Name, b.Name) })
	lines := make([]string, len(flags))
	texts := make([]string, len(flags))
	width := 0
	for i, f := range flags {
		line := "      --" + f.Name
		if f.Shorthand != "" {
			line = "  -" + f.Shorthand + ", --" + f.Name
		}
		name, usage := unquoteUsage(f)
		if name != "" {
			line += " " + name
		}
		if !isZero(f) {
			if f.Value.Type() == "string" {
				usage += fmt.Sprintf(" (default %q)", f.DefValue)
			} else {
				usage += " (default " + f.DefValue + ")"
			}
		}
		lines[i], texts[i] = line, usage
		width = max(width, len(line))
	}
	var b strings.Builder
	for i, line := range lines {
		b.WriteString(line)
		b.WriteString(strings.Repeat(" ", width-len(line)+3))
		b.WriteString(strings.ReplaceAll(texts[i], "\n", "\n"+strings.Repeat(" ", width+3)))
		b.WriteByte('\n')
	}
	return b.String()
}

// unquoteUsage returns the name of f's value for the help (the word in
// backquotes in its usage, else its type; none for a bool) and its usage
// without the backquotes.
func unquoteUsage(f *Flag) (name, usage string) {
	usage = f.Usage
	if i := strings.IndexByte(usage, '`'); i >= 0 {
		if j := strings.IndexByte(usage[i+1:], '`'); j >= 0 {
			name = usage[i+1 : i+1+j]
			return name, usage[:i] + name + usage[i+1+j+1:]
		}
	}
	if f.NoOptDefVal != "" {
		return "", usage
	}
	return f.Value.Type(), usage
}

// isZero reports whether f's default is its type's zero value, which the
// help does not print.
func isZero(f *Flag) bool {
	switch f.DefValue {
	case "", "0", "false":
		return true
	}
	return false
}

type boolValue bool

func (b *boolValue) Set(s string) error {
	v, err := strconv.ParseBool(s)
	if err != nil {
		return fmt.Errorf("not a boolean (true or false)")
	}
	*b = boolValue(v)
	return nil
}
func (b *boolValue) String() string { return strconv.FormatBool(bool(*b)) }
func (b *boolValue) Type() string   { return "bool" }

type stringValue string

func (s *stringValue) Set(v string) error { *s = stringValue(v); return nil }
func (s *stringValue) String() string     { return string(*s) }
func (s *stringValue) Type() string       { return "string" }

type intValue int

func (n *intValue) Set(s string) error {
	v, err := strconv.ParseInt(s, 0, strconv.IntSize)
	if err != nil {
		return numError(err)
	}
	*n = intValue(v)
	return nil
}
func (n *intValue) String() string { return strconv.Itoa(int(*n)) }
func (n *intValue) Type() string   { return "int" }

type int64Value int64

func (n *int64Value) Set(s string) error {
	v, err := strconv.ParseInt(s, 0, 64)
	if err != nil {
		return numError(err)
	}
	*n = int64Value(v)
	return nil
}
func (n *int64Value) String() string { return strconv.FormatInt(int64(*n), 10) }
func (n *int64Value) Type() string   { return "int64" }

// numError words a strconv error for a user: "not an integer", "out of range".
func numError(err error) error {
	if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
		return fmt.Errorf("out of range")
	}
	return fmt.Errorf("not an integer")
}
