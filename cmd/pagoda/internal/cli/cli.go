// Package cli runs the pagoda command's command line: a tree of commands,
// GNU-style flags (--name value, --name=value, -n, -abc, flags anywhere
// among the arguments, "--" ending them), and each command's help.
//
// Its API is the part of cobra's (with pflag's flags) that the pagoda
// command used. pagoda's own is smaller than either and links neither
// package net, which pflag imports (with cgo on, as `go build` has it
// where a C compiler is installed, net links the C library dynamically,
// which costs every process about a millisecond to start), nor
// text/template, which cobra uses for its version line and whose method
// calls by name keep every exported method of the program in the binary.
//
// A negative number standing alone ("-3") is an argument, never a
// shorthand flag, so that a command can take one as a key.
package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
)

// Command is a command, or a group of subcommands.
type Command struct {
	// Use is the one-line usage: the command's name, then its arguments.
	Use string
	// Short is the description in the parent's list of commands; Long is
	// the help's text (Short when empty).
	Short, Long string
	// Args checks the positional arguments before RunE runs; nil accepts
	// any (but a group with subcommands refuses unknown ones).
	Args PositionalArgs
	// RunE runs the command. A command without one prints its help.
	RunE func(cmd *Command, args []string) error

	parent     *Command
	commands   []*Command
	flags      FlagSet // this command's own flags
	persistent FlagSet // flags of this command and every command below it
	help       bool    // -h, --help

	args    []string
	argsSet bool
	in      io.Reader
	out     io.Writer
	errOut  io.Writer
	ctx     context.Context
	flagErr func(*Command, error) error
}

// PositionalArgs checks a command's positional arguments.
type PositionalArgs func(cmd *Command, args []string) error

// ExactArgs accepts exactly n arguments.
func ExactArgs(n int) PositionalArgs {
	return func(cmd *Command, args []string) error {
		if len(args) != n {
			return fmt.Errorf("accepts %d arg(s), received %d", n, len(args))
		}
		return nil
	}
}

// RangeArgs accepts min to max arguments.
func RangeArgs(min, max int) PositionalArgs {
	return func(cmd *Command, args []string) error {
		if len(args) < min || len(args) > max {
			return fmt.Errorf("accepts between %d and %d arg(s), received %d", min, max, len(args))
		}
		return nil
	}
}

// MinimumNArgs accepts n arguments or more.
func MinimumNArgs(n int) PositionalArgs {
	return func(cmd *Command, args []string) error {
		if len(args) < n {
			return fmt.Errorf("requires at least %d arg(s), only received %d", n, len(args))
		}
		return nil
	}
}

// NoArgs accepts none.
func NoArgs(cmd *Command, args []string) error {
	if len(args) > 0 {
		return fmt.Errorf("unknown command %q for %q", args[0], cmd.CommandPath())
	}
	return nil
}

// AddCommand adds subcommands.
func (c *Command) AddCommand(cmds ...*Command) {
	for _, sub := range cmds {
		if sub == c {
			panic("cli: command can't be a child of itself")
		}
		sub.parent = c
		c.commands = append(c.commands, sub)
	}
}

// Commands returns the subcommands.
func (c *Command) Commands() []*Command { return c.commands }

// Name is the first word of Use.
func (c *Command) Name() string {
	name, _, _ := strings.Cut(c.Use, " ")
	return name
}

// CommandPath is the names from the root to c: "pagoda fs ls".
func (c *Command) CommandPath() string {
	if c.parent == nil {
		return c.Name()
	}
	return c.parent.CommandPath() + " " + c.Name()
}

// UseLine is the usage line: the parent's path, Use, and "[flags]".
func (c *Command) UseLine() string {
	line := c.Use
	if c.parent != nil {
		line = c.parent.CommandPath() + " " + c.Use
	}
	if !strings.Contains(line, "[flags]") {
		line += " [flags]"
	}
	return line
}

// Flags returns the command's own flags.
func (c *Command) Flags() *FlagSet { return &c.flags }

// PersistentFlags returns the flags of the command that its subcommands
// take too.
func (c *Command) PersistentFlags() *FlagSet { return &c.persistent }

// SetArgs sets the arguments Execute parses instead of os.Args[1:].
func (c *Command) SetArgs(args []string) { c.args, c.argsSet = args, true }

// SetOut, SetErr and SetIn set the command's streams (os.Stdout, os.Stderr
// and os.Stdin by default); subcommands use their root's.
func (c *Command) SetOut(w io.Writer) { c.out = w }
func (c *Command) SetErr(w io.Writer) { c.errOut = w }
func (c *Command) SetIn(r io.Reader)  { c.in = r }

// OutOrStdout returns the output stream.
func (c *Command) OutOrStdout() io.Writer {
	return inherited(c, func(c *Command) io.Writer { return c.out }, io.Writer(os.Stdout))
}

// ErrOrStderr returns the error stream.
func (c *Command) ErrOrStderr() io.Writer {
	return inherited(c, func(c *Command) io.Writer { return c.errOut }, io.Writer(os.Stderr))
}

// InOrStdin returns the input stream.
func (c *Command) InOrStdin() io.Reader {
	return inherited(c, func(c *Command) io.Reader { return c.in }, io.Reader(os.Stdin))
}

// Context returns the context Execute ran the command with.
func (c *Command) Context() context.Context {
	return inherited(c, func(c *Command) context.Context { return c.ctx }, context.Background())
}

// inherited returns field (an interface, nil when unset) of c or, unset
// there, of its nearest ancestor that sets it, else def.
func inherited[T comparable](c *Command, field func(*Command) T, def T) T {
	var unset T
	for ; c != nil; c = c.parent {
		if v := field(c); v != unset {
			return v
		}
	}
	return def
}

// SetFlagErrorFunc sets what a flag error of c or of a command below it
// becomes.
func (c *Command) SetFlagErrorFunc(f func(*Command, error) error) { c.flagErr = f }

func (c *Command) flagError(err error) error {
	for p := c; p != nil; p = p.parent {
		if p.flagErr != nil {
			return p.flagErr(c, err)
		}
	}
	return err
}

// Execute runs the command line: it finds the command it names, parses
// its flags, checks its arguments and runs it.
func (c *Command) Execute() error { return c.ExecuteContext(context.Background()) }

// ExecuteContext is Execute with a context for the command (Context).
func (c *Command) ExecuteContext(ctx context.Context) error {
	args := c.args
	if !c.argsSet {
		args = os.Args[1:]
	}
	c.ctx = ctx
	cmd, rest := c.find(args)
	positional, err := cmd.parse(rest)
	if err != nil {
		return cmd.flagError(err)
	}
	if cmd.help {
		return cmd.Help()
	}
	if cmd == c && c.parent == nil && len(positional) > 0 && positional[0] == "help" && c.sub("help") == nil {
		target, rest := c.find(positional[1:])
		if len(rest) > 0 {
			return fmt.Errorf("unknown help topic %q", strings.Join(rest, " "))
		}
		return target.Help()
	}
	if len(cmd.commands) > 0 && cmd.Args == nil && len(positional) > 0 {
		return fmt.Errorf("unknown command %q for %q", positional[0], cmd.CommandPath())
	}
	if cmd.RunE == nil {
		return cmd.Help()
	}
	if cmd.Args != nil {
		if err := cmd.Args(cmd, positional); err != nil {
			return err
		}
	}
	return cmd.RunE(cmd, positional)
}

// find descends from c through the subcommands that args name, past the
// flags (and their values) before each name. The first positional
// argument that names no subcommand ends the descent.
func (c *Command) find(args []string) (*Command, []string) {
	cmd := c
	var rest []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			return cmd, append(rest, args[i:]...)
		case isFlag(a):
			rest = append(rest, a)
			if f := cmd.lookupArg(a); f != nil && f.NoOptDefVal == "" && !strings.Contains(a, "=") && i+1 < len(args) {
				i++
				rest = append(rest, args[i]) // the flag's value
			}
		default:
			if sub := cmd.sub(a); sub != nil {
				cmd = sub
				continue
			}
			return cmd, append(rest, args[i:]...)
		}
	}
	return cmd, rest
}

// sub returns the subcommand called name, or nil.
func (c *Command) sub(name string) *Command {
	for _, s := range c.commands {
		if s.Name() == name {
			return s
		}
	}
	return nil
}

// lookupArg returns the flag that the argument a ("--name", "--name=v",
// "-n") sets, if c takes it.
func (c *Command) lookupArg(a string) *Flag {
	if name, ok := strings.CutPrefix(a, "--"); ok {
		name, _, _ = strings.Cut(name, "=")
		return c.lookup(name)
	}
	if len(a) == 2 {
		return c.lookupShort(a[1:])
	}
	return nil
}

// lookup returns the flag called name that c takes: its own, or a
// persistent flag of its own or of a command above it.
func (c *Command) lookup(name string) *Flag {
	return c.search(func(s *FlagSet) *Flag { return s.Lookup(name) })
}

// lookupShort is lookup by shorthand.
func (c *Command) lookupShort(short string) *Flag {
	return c.search(func(s *FlagSet) *Flag { return s.ShorthandLookup(short) })
}

// search returns the first flag get finds in c's own flags, then in the
// persistent flags of c and the commands above it.
func (c *Command) search(get func(*FlagSet) *Flag) *Flag {
	if f := get(&c.flags); f != nil {
		return f
	}
	for p := c; p != nil; p = p.parent {
		if f := get(&p.persistent); f != nil {
			return f
		}
	}
	return nil
}

// isFlag reports whether the argument a is a flag: it starts with "-", is
// not "-" alone (standard input, say) and is not a negative number.
func isFlag(a string) bool {
	return len(a) > 1 && a[0] == '-' && !isNegativeNumber(a)
}

// isNegativeNumber reports whether a is "-" then a digit, then digits,
// dots, signs and exponents: -3, -2.5, -1e9.
func isNegativeNumber(a string) bool {
	if len(a) < 2 || a[0] != '-' || a[1] < '0' || a[1] > '9' {
		return false
	}
	for i := 2; i < len(a); i++ {
		switch ch := a[i]; {
		case ch >= '0' && ch <= '9', ch == '.', ch == 'e', ch == 'E', ch == '+', ch == '-':
		default:
			return false
		}
	}
	return true
}

// parse sets the flags in args and returns the positional arguments.
func (c *Command) parse(args []string) (positional []string, err error) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			return append(positional, args[i+1:]...), nil
		case strings.HasPrefix(a, "--"):
			name, value, hasValue := strings.Cut(a[2:], "=")
			if name == "help" && !hasValue {
				c.help = true
				continue
			}
			f := c.lookup(name)
			if f == nil {
				return nil, fmt.Errorf("unknown flag: --%s", name)
			}
			switch {
			case hasValue:
			case f.NoOptDefVal != "":
				value = f.NoOptDefVal
			case i+1 < len(args):
				i++
				value = args[i]
			default:
				return nil, fmt.Errorf("flag needs an argument: --%s", name)
			}
			if err := set(f, value); err != nil {
				return nil, err
			}
		case isFlag(a):
			if err := c.parseShort(a, args, &i); err != nil {
				return nil, err
			}
		default:
			positional = append(positional, a)
		}
	}
	return positional, nil
}

// parseShort sets the shorthand flags of args[*i]: -l, -lR, -xVALUE,
// -x=VALUE, or -x VALUE (which moves *i past the value).
func (c *Command) parseShort(a string, args []string, i *int) error {
	for j := 1; j < len(a); j++ {
		short := a[j : j+1]
		if short == "h" {
			c.help = true
			continue
		}
		f := c.lookupShort(short)
		if f == nil {
			return fmt.Errorf("unknown shorthand flag: '%s' in %s", short, a)
		}
		rest := a[j+1:]
		var value string
		switch {
		case strings.HasPrefix(rest, "="):
			value = rest[1:]
		case f.NoOptDefVal != "":
			if err := set(f, f.NoOptDefVal); err != nil {
				return err
			}
			continue
		case rest != "":
			value = rest
		case *i+1 < len(args):
			*i++
			value = args[*i]
		default:
			return fmt.Errorf("flag needs an argument: '%s' in %s", short, a)
		}
		return set(f, value)
	}
	return nil
}

func set(f *Flag, value string) error {
	if err := f.Value.Set(value); err != nil {
		return fmt.Errorf("invalid argument %q for \"--%s\" flag: %w", value, f.Name, err)
	}
	f.Changed = true
	return nil
}

// Help prints the command's help on its output.
func (c *Command) Help() error {
	_, err := io.WriteString(c.OutOrStdout(), c.helpText())
	return err
}

func (c *Command) helpText() string {
	var b strings.Builder
	text := strings.TrimSpace(c.Long)
	if text == "" {
		text = c.Short
	}
	if text != "" {
		b.WriteString(text + "\n\n")
	}
	b.WriteString("Usage:\n")
	if c.RunE != nil {
		b.WriteString("  " + c.UseLine() + "\n")
	}
	subs := c.commands
	if c.parent == nil {
		subs = append(subs[:len(subs):len(subs)], &Command{Use: "help [command]", Short: "Help about any command"})
	}
	if len(c.commands) > 0 {
		b.WriteString("  " + c.CommandPath() + " [command]\n\nAvailable Commands:\n")
		width := 0
		for _, s := range subs {
			width = max(width, len(s.Name()))
		}
		for _, s := range sorted(subs) {
			b.WriteString("  " + s.Name() + strings.Repeat(" ", width-len(s.Name())+2) + s.Short + "\n")
		}
	}
	own := append(c.flags.flags[:len(c.flags.flags):len(c.flags.flags)], c.persistent.flags...)
	own = append(own, &Flag{Name: "help", Shorthand: "h", Usage: "help for " + c.Name(), Value: new(boolValue), DefValue: "false", NoOptDefVal: "true"})
	b.WriteString("\nFlags:\n" + usages(own))
	var inherited []*Flag
	for p := c.parent; p != nil; p = p.parent {
		inherited = append(inherited, p.persistent.flags...)
	}
	if len(inherited) > 0 {
		b.WriteString("\nGlobal Flags:\n" + usages(inherited))
	}
	if len(c.commands) > 0 {
		b.WriteString("\nUse \"" + c.CommandPath() + " [command] --help\" for more information about a command.\n")
	}
	return b.String()
}

// sorted returns cmds sorted by name.
func sorted(cmds []*Command) []*Command {
	out := slices.Clone(cmds)
	slices.SortFunc(out, func(a, b *Command) int { return strings.Compare(a.Name(), b.Name()) })
	return out
}
